package tui

import (
	"bytes"
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"steward/govern"
	"steward/model"
)

var fixedNow = time.Date(2026, 5, 4, 12, 0, 0, 0, time.UTC)

// testActor is the fixed actor of every test core.
var testActor = govern.Actor{GiteaLogin: "maint", OSUser: "ops", Host: "bench", Role: govern.RoleOperator}

// testCore builds a governed core on a fresh workspace.
func testCore(t testing.TB, readOnly bool, now func() time.Time) (*govern.Core, govern.Workspace, string) {
	t.Helper()
	dir := t.TempDir()
	ws := govern.Workspace{LocksDir: filepath.Join(dir, "locks"), DBPath: filepath.Join(dir, "cp.sqlite3"), RepoRoot: filepath.Join(dir, "repo"), Host: "bench"}
	if err := govern.InitWorkspace(ws); err != nil {
		t.Fatal(err)
	}
	auditPath := filepath.Join(dir, "audit.jsonl")
	log, err := govern.OpenAudit(auditPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := govern.New(ws, log, govern.Options{Actor: testActor, ReadOnly: readOnly, Now: now})
	t.Cleanup(func() { c.Close(); log.Close() })
	return c, ws, auditPath
}

// testCoreGitea builds a core whose workspace has a Gitea side.
func testCoreGitea(t testing.TB, g govern.GiteaSide, now func() time.Time) (*govern.Core, govern.Workspace, string) {
	t.Helper()
	dir := t.TempDir()
	ws := govern.Workspace{LocksDir: filepath.Join(dir, "locks"), DBPath: filepath.Join(dir, "cp.sqlite3"), RepoRoot: filepath.Join(dir, "repo"), Host: "bench", Gitea: g}
	if err := govern.InitWorkspace(ws); err != nil {
		t.Fatal(err)
	}
	auditPath := filepath.Join(dir, "audit.jsonl")
	log, err := govern.OpenAudit(auditPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := govern.New(ws, log, govern.Options{Actor: testActor, Now: now})
	t.Cleanup(func() { c.Close(); log.Close() })
	return c, ws, auditPath
}

// newTestRoot returns a root at w×h with a fixed clock and a real (empty) core.
func newTestRoot(t testing.TB, w, h int, readOnly bool) *Root {
	t.Helper()
	c, _, _ := testCore(t, readOnly, func() time.Time { return fixedNow })
	r := New(Options{Core: c, Now: func() time.Time { return fixedNow },
		ItemURL: func(it model.Item) string {
			return fmt.Sprintf("https://gitea.example/%s/%s/issues/%d", it.Org, it.Repo, it.Number)
		}})
	r.Update(tea.WindowSizeMsg{Width: w, Height: h})
	return r
}

// send feeds msgs to the root and runs the commands they return, synchronously, until none
// is left (the tests never start the tick, so no command blocks).
func send(r *Root, msgs ...tea.Msg) {
	for _, m := range msgs {
		_, cmd := r.Update(m)
		drain(r, cmd)
	}
}

func drain(r *Root, cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	msg := cmd()
	switch m := msg.(type) {
	case nil:
	case tea.BatchMsg:
		for _, c := range m {
			drain(r, c)
		}
	default:
		if fmt.Sprintf("%T", m) == "tea.sequenceMsg" {
			return
		}
		_, next := r.Update(m)
		drain(r, next)
	}
}

func keyMsg(k string) tea.KeyPressMsg {
	special := map[string]tea.Key{
		"enter": {Code: tea.KeyEnter}, "esc": {Code: tea.KeyEscape}, "tab": {Code: tea.KeyTab},
		"shift+tab": {Code: tea.KeyTab, Mod: tea.ModShift}, "up": {Code: tea.KeyUp}, "down": {Code: tea.KeyDown},
		"left": {Code: tea.KeyLeft}, "right": {Code: tea.KeyRight}, "space": {Code: tea.KeySpace, Text: " "},
		"backspace": {Code: tea.KeyBackspace}, "pgdown": {Code: tea.KeyPgDown}, "pgup": {Code: tea.KeyPgUp},
	}
	if s, ok := special[k]; ok {
		return tea.KeyPressMsg(s)
	}
	if strings.HasPrefix(k, "ctrl+") {
		return tea.KeyPressMsg{Code: rune(k[5]), Mod: tea.ModCtrl}
	}
	r := []rune(k)[0]
	return tea.KeyPressMsg{Code: r, Text: k}
}

// typeText types s one key at a time.
func typeText(s string) []tea.Msg {
	var out []tea.Msg
	for _, r := range s {
		out = append(out, tea.KeyPressMsg{Code: r, Text: string(r)})
	}
	return out
}

// frame renders the root at the fixed ANSI (16-colour) profile.
func frame(r *Root) string {
	var b bytes.Buffer
	w := &colorprofile.Writer{Forward: &b, Profile: colorprofile.ANSI}
	_, _ = w.WriteString(r.Render())
	return b.String()
}

// plain is the frame without any styling, for assertions.
func plain(r *Root) string { return ansi.Strip(r.Render()) }

// requireGolden compares the frame with testdata/<test name>.golden.
func requireGolden(t *testing.T, r *Root) {
	t.Helper()
	f := frame(r)
	checkFrame(t, f, r.width, r.height)
	golden.RequireEqual(t, f)
}

// checkFrame asserts the frame is exactly w×h cells.
func checkFrame(t *testing.T, f string, w, h int) {
	t.Helper()
	lines := strings.Split(f, "\n")
	if len(lines) != h {
		t.Errorf("frame has %d lines, want %d", len(lines), h)
	}
	for i, l := range lines {
		if n := ansi.StringWidth(l); n != w {
			t.Errorf("line %d is %d cells wide, want %d: %q", i, n, w, ansi.Strip(l))
			break
		}
	}
}

var sizes = []struct {
	name string
	w, h int
}{{"80x24", 80, 24}, {"160x48", 160, 48}}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

// updateDocs reports whether x/exp/golden's -update flag is set (the one -update flag of
// this test binary).
func updateDocs() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}
