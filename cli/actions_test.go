package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"steward/govern"
	"steward/leases/leaserec"
	"steward/leases/leasestest"
)

// cliWorkspace builds a real workspace with one lease that expired an hour ago.
func cliWorkspace(t *testing.T) []string {
	t.Helper()
	dir := t.TempDir()
	ws := govern.Workspace{LocksDir: filepath.Join(dir, "locks"), DBPath: filepath.Join(dir, "cp.sqlite3"), RepoRoot: filepath.Join(dir, "repo")}
	if err := govern.InitWorkspace(ws); err != nil {
		t.Fatal(err)
	}
	exp := leaserec.FormatTime(time.Now().Add(-time.Hour))
	leasestest.Insert(t, ws.DBPath, []leasestest.Session{{SessionID: "s1", Role: "author"}},
		[]leasestest.Lease{{LeaseID: "L1", SessionID: "s1", Role: "author", TaskClass: "author_issue_work",
			Work: leasestest.Work(leaserec.KindIssue, 5), CreatedAt: exp, ExpiresAt: exp}})
	return []string{"--locks", ws.LocksDir, "--db", ws.DBPath, "--repo-root", ws.RepoRoot, "--audit", filepath.Join(dir, "audit.jsonl")}
}

func run(t *testing.T, args ...string) (int, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(args, &out, &errb)
	return code, out.String() + errb.String()
}

func TestReclaimFromTheCommandLine(t *testing.T) {
	ws := cliWorkspace(t)
	audit := ws[len(ws)-1]
	dbBefore, _ := os.ReadFile(ws[3])

	code, out := run(t, append([]string{"lease", "reclaim-expired", "--lease", "L1", "--dry-run", "--as-role", "operator"}, ws...)...)
	if code != ExitOK || !strings.Contains(out, "allowed") || !strings.Contains(out, "nothing was changed") {
		t.Fatalf("dry run: %d\n%s", code, out)
	}
	if dbAfter, _ := os.ReadFile(ws[3]); !bytes.Equal(dbBefore, dbAfter) {
		t.Fatal("dry run changed the DB file")
	}
	if _, err := os.Stat(audit); err == nil {
		if b, _ := os.ReadFile(audit); len(b) > 0 {
			t.Fatalf("dry run wrote audit records:\n%s", b)
		}
	}

	code, out = run(t, append([]string{"lease", "reclaim-expired", "--lease", "L1"}, ws...)...)
	if code != ExitRefused || !strings.Contains(out, "role_too_low") {
		t.Fatalf("as viewer (the default role): %d\n%s", code, out)
	}
	code, out = run(t, append([]string{"lease", "reclaim-expired", "--lease", "L1", "--as-role", "operator", "--json"}, ws...)...)
	var o govern.Outcome
	if code != ExitOK || json.Unmarshal([]byte(out), &o) != nil || o.Result != govern.ResultSucceeded {
		t.Fatalf("apply: %d\n%s", code, out)
	}
	code, out = run(t, append([]string{"lease", "reclaim-expired", "--lease", "L1", "--as-role", "operator"}, ws...)...)
	if code != ExitRefused || !strings.Contains(out, "not_active") {
		t.Fatalf("second apply: %d\n%s", code, out)
	}
	code, out = run(t, append([]string{"audit", "--json"}, ws...)...)
	var view struct{ Attempts []govern.Attempt }
	if code != ExitOK || json.Unmarshal([]byte(out), &view) != nil || len(view.Attempts) != 3 {
		t.Fatalf("audit: %d\n%s", code, out)
	}
	if view.Attempts[1].Status() != govern.ResultSucceeded || view.Attempts[1].Outcome.Attempt != o.Attempt {
		t.Fatalf("audit attempts: %+v", view.Attempts)
	}
}

func TestUsageErrorsExitOne(t *testing.T) {
	ws := cliWorkspace(t)
	if code, out := run(t, append([]string{"claim", "--org", "a", "--repo", "b", "--number", "-3", "--session", "s"}, ws...)...); code != ExitError || !strings.Contains(out, "positive") {
		t.Fatalf("bad number: %d %s", code, out)
	}
	if code, _ := run(t, "no-such-command"); code != ExitError {
		t.Fatalf("unknown command: %d", code)
	}
}

// TestWorkerFenceFlags: a worker's heartbeat fenced on the claim's values succeeds once;
// the same values again are stale and refused fence_moved (exit 3), and the audit names the
// worker's session as the actor.
func TestWorkerFenceFlags(t *testing.T) {
	ws := cliWorkspace(t)
	code, out := run(t, append([]string{"claim", "--org", "acme", "--repo", "widgets", "--number", "9", "--session", "w1", "--as-role", "operator", "--json"}, ws...)...)
	var claim govern.Outcome
	if code != ExitOK || json.Unmarshal([]byte(out), &claim) != nil || claim.Detail["lock_generation"] != "1" {
		t.Fatalf("claim: %d\n%s", code, out)
	}
	hb := append([]string{"heartbeat", "--lease", claim.Detail["lease_id"], "--session", "w1", "--as-role", "operator",
		"--expect-expires-at", claim.Detail["expires_at"], "--expect-lock-generation", "1", "--expect-task-session", claim.Detail["task_session_id"]}, ws...)
	if code, out := run(t, hb...); code != ExitOK {
		t.Fatalf("heartbeat on the claim's fence: %d\n%s", code, out)
	}
	if code, out := run(t, hb...); code != ExitRefused || !strings.Contains(out, "fence_moved") || !strings.Contains(out, "lock_generation is 2, you hold 1") {
		t.Fatalf("heartbeat on a stale fence: %d\n%s", code, out)
	}
	recs, _, err := govern.ReadAudit(ws[len(ws)-1])
	if err != nil || len(recs) == 0 {
		t.Fatal(err)
	}
	for _, r := range recs {
		if r.Actor.Session != "w1" {
			t.Fatalf("record %s names session %q", r.Attempt, r.Actor.Session)
		}
	}
}
