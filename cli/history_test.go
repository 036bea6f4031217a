package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"steward/govern"
	"steward/govern/actionid"
	"steward/history"
	"steward/leases/seedtest"
)

// historyWorkspace makes a short history through the governed core with a fake clock:
// s1 claims #1 at 10:00, s2's claim of #1 is refused at 10:01, s1 releases at 10:05.
func historyWorkspace(t *testing.T) (dir string, args []string) {
	t.Helper()
	dir = t.TempDir()
	host, _ := os.Hostname()
	ws := govern.Workspace{LocksDir: filepath.Join(dir, "locks"), DBPath: filepath.Join(dir, "db", "cp.sqlite3"), RepoRoot: filepath.Join(dir, "repo"),
		Env: func(string) (string, bool) { return "", false }, Host: host}
	if err := govern.InitWorkspace(ws); err != nil {
		t.Fatal(err)
	}
	log, err := govern.OpenAudit(filepath.Join(dir, "audit.jsonl"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	now := seedtest.Now
	core := govern.New(ws, log, govern.Options{Actor: govern.Actor{OSUser: "tester", Host: host, Role: govern.RoleOperator, GiteaLogin: "maint"},
		Now: func() time.Time { return now }})
	defer core.Close()
	it := &govern.Item{Remote: "origin", Org: "acme", Repo: "widgets", Kind: "issue", Number: 1}
	do := func(d time.Duration, req govern.Request, want govern.Result) govern.Outcome {
		now = seedtest.Now.Add(d)
		_, out, err := core.Run(context.Background(), req, "")
		if err != nil || out.Result != want {
			t.Fatalf("%s: %+v %v", req.Action, out, err)
		}
		return out
	}
	claim := func(s string) govern.Request {
		return govern.Request{Action: actionid.Claim, Target: govern.Target{Item: it, Session: s},
			Params: govern.ClaimParams{PID: strconv.Itoa(os.Getpid()), Role: "author", Username: "bot-" + s}}
	}
	out := do(0, claim("s1"), govern.ResultSucceeded)
	do(time.Minute, claim("s2"), govern.ResultRefused)
	do(5*time.Minute, govern.Request{Action: actionid.Release, Target: govern.Target{LeaseID: out.Detail["lease_id"], Session: "s1"}}, govern.ResultSucceeded)
	return dir, []string{"--locks", ws.LocksDir, "--db", ws.DBPath, "--repo-root", ws.RepoRoot, "--audit", log.Path(),
		"--state-dir", filepath.Join(dir, "state")}
}

// TestStatusAt: `steward status --at` shows the claim at a moment before its release, and
// not after; --json carries the reconstruction.
func TestStatusAt(t *testing.T) {
	_, ws := historyWorkspace(t)
	statusArgs := func(extra ...string) []string {
		return append(append([]string{"status", "--now", "2026-07-23T10:30:00Z"}, extra...), ws[:len(ws)-2]...)
	}
	code, out := run(t, statusArgs("--at", "2026-07-23T10:02:00Z", "--json")...)
	var fl history.Fleet
	if code != ExitOK || json.Unmarshal([]byte(out), &fl) != nil {
		t.Fatalf("%d\n%s", code, out)
	}
	if len(fl.Claims) != 1 || fl.Claims[0].Session != "s1" || fl.Claims[0].State != history.ClaimHeld ||
		fl.Claims[0].Ended.IsZero() || len(fl.Contention) != 1 {
		t.Fatalf("at 10:02: %+v", fl)
	}
	code, out = run(t, statusArgs("--at", "25m")...)
	if code != ExitOK || !strings.Contains(out, "as of 2026-07-23 10:05:00Z — reconstructed") || !strings.Contains(out, "Claims live then (0)") {
		t.Fatalf("25m back:\n%s", out)
	}
	code, out = run(t, statusArgs("--at", "2026-07-23T10:03:00Z")...)
	if code != ExitOK || !strings.Contains(out, "acme/widgets#1") || !strings.Contains(out, "Unknown at that moment:") {
		t.Fatalf("text:\n%s", out)
	}
	for _, bad := range [][]string{{"--at", "yesterday"}, {"--at", "2027-01-01T00:00:00Z"}, {"--at", "1h", "--watch"}} {
		if code, out := run(t, statusArgs(bad...)...); code != ExitError {
			t.Fatalf("%v: %d\n%s", bad, code, out)
		}
	}
}

// TestHistoryCommand: the item and session timelines, since-left with its mark, the heatmap.
func TestHistoryCommand(t *testing.T) {
	dir, ws := historyWorkspace(t)
	h := func(extra ...string) (int, string) {
		return run(t, append(append([]string{"history", "--now", "2026-07-23T10:30:00Z"}, extra...), ws...)...)
	}
	code, out := h("--item", "acme/widgets#1")
	for _, want := range []string{"Timeline of acme/widgets#1", "claim.refused", "[events#", "[audit:att-", "[locks:retired/", "Gaps (evidence missing", "gitea"} {
		if code != ExitOK || !strings.Contains(out, want) {
			t.Fatalf("item timeline lacks %q:\n%s", want, out)
		}
	}
	code, out = h("--session", "s2", "--json")
	var tl history.Timeline
	if code != ExitOK || json.Unmarshal([]byte(out), &tl) != nil || len(tl.Entries) != 2 || tl.Entries[0].Kind != history.KindRefused {
		t.Fatalf("session timeline: %d\n%s", code, out)
	}
	code, out = h("--since-left")
	if code != ExitOK || !strings.Contains(out, "Since you left (2026-07-22 10:30:00Z)") {
		t.Fatalf("first since-left (no mark: 24 h):\n%s", out)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "state", "seen", "*.json")); len(m) != 1 {
		t.Fatalf("marks %v", m)
	}
	code, out = h("--since-left")
	if code != ExitOK || !strings.Contains(out, "Since you left (2026-07-23 10:30:00Z)") {
		t.Fatalf("second since-left starts at the mark:\n%s", out)
	}
	code, out = h("--heat", "--window", "1h")
	if code != ExitOK || !strings.Contains(out, "s2") || !strings.Contains(out, "acme/widgets#1 0/1/0") {
		t.Fatalf("heat:\n%s", out)
	}
	if code, out := h("--item", "acme#1"); code != ExitError || !strings.Contains(out, "ORG/REPO#N") {
		t.Fatalf("bad item: %d %s", code, out)
	}
	if code, _ := h("--heat", "--window", "1m"); code != ExitError {
		t.Fatal("a 1m window was taken")
	}
}
