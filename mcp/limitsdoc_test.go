package mcp

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"steward/govern"
)

// TestSizeLimitsDocumented keeps docs/mcp.md's table of the tools' size limits equal to the
// core's (govern.ArgLimits): each row's core argument has the limit the row states, every
// argument a mutating tool passes to the core has a row, and the stdio line limit is the one
// stated. (govern.TestArgLimitsDocumented does the same for docs/reliability.md's table.)
func TestSizeLimitsDocumented(t *testing.T) {
	data, err := os.ReadFile("../docs/mcp.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	start := strings.Index(doc, "\n## Size limits\n")
	if start < 0 {
		t.Fatal(`docs/mcp.md has no "## Size limits" section`)
	}
	sec := doc[start+1:]
	if end := strings.Index(sec[3:], "\n## "); end >= 0 {
		sec = sec[:end+3]
	}
	code := regexp.MustCompile("`([a-z_.*]+)`")
	num := regexp.MustCompile(`\d[\d,]*\d|\d`)
	covered := map[string]bool{}
	rows := 0
	for _, line := range strings.Split(sec, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 5 || !strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "| tool argument") {
			continue
		}
		rows++
		m := code.FindStringSubmatch(cells[2])
		n := num.FindString(cells[3])
		if m == nil || n == "" {
			t.Errorf("row %q: no core argument or limit", line)
			continue
		}
		want, _ := strconv.Atoi(strings.ReplaceAll(n, ",", ""))
		names := []string{m[1]}
		if m[1] == "target.item.*" {
			names = []string{"target.item.org", "target.item.repo", "target.item.remote"}
		}
		for _, name := range names {
			l, ok := govern.LimitOf(name)
			switch {
			case !ok:
				t.Errorf("docs/mcp.md names %s; the core has no such argument", name)
			case l.Max != want:
				t.Errorf("docs/mcp.md says %s is at most %d bytes; the core says %d", name, want, l.Max)
			}
			covered[name] = true
		}
	}
	if rows == 0 {
		t.Fatal("docs/mcp.md's size limits table has no rows")
	}
	// The core arguments the mutating tools fill (tools.go, seed.go).
	for _, name := range []string{"target.session", "target.item.org", "target.item.repo", "target.item.remote", "role", "profile",
		"username", "branch", "worktree", "ttl", "target.lease_id", "expect_expires_at", "expect_task_session_id", "question"} {
		if !covered[name] {
			t.Errorf("docs/mcp.md's size limits table has no row for %s", name)
		}
	}
	if maxStdioLine != 4<<20 || !strings.Contains(sec, "4 MiB a line over stdio (`mcp.maxStdioLine`)") {
		t.Errorf("docs/mcp.md must state the stdio line limit, %d bytes, as 4 MiB", maxStdioLine)
	}
}
