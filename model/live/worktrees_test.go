package live_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"steward/govern"
	"steward/govern/actionid"
	"steward/model"
	"steward/model/live"
)

// worktreeSeen is the worktree state the claim's lease evidence gives ("" when none).
func worktreeSeen(s *model.Snapshot) string {
	if len(s.Claims) != 1 {
		return ""
	}
	for _, e := range s.Claims[0].Evidence {
		if e.Source == model.SourceDB && e.Field == "worktree" {
			_, rest, _ := strings.Cut(e.Value, ": ")
			st, _, _ := strings.Cut(rest, " ")
			return st
		}
	}
	return ""
}

// TestWorktreeRemovedSeenAtOnce: a worktree removed from the branches directory, and one
// made there again, show in the next snapshot with no periodic pass due (the probe and
// resync periods are an hour): the branches directory's events re-probe the worktrees
// under the entries they name. Without the watch the removal waits for the worktree's
// turn of the periodic pass, and the test times out.
func TestWorktreeRemovedSeenAtOnce(t *testing.T) {
	dir := t.TempDir()
	ws := govern.Workspace{LocksDir: filepath.Join(dir, "locks"), DBPath: filepath.Join(dir, "cp.sqlite3"), RepoRoot: filepath.Join(dir, "repo")}
	if err := govern.InitWorkspace(ws); err != nil {
		t.Fatal(err)
	}
	audit, err := govern.OpenAudit(filepath.Join(dir, "audit.jsonl"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer audit.Close()
	core := govern.New(ws, audit, govern.Options{Actor: govern.LocalActor(govern.RoleOperator, "tester")})
	defer core.Close()
	ctx := context.Background()
	child := exec.Command("sleep", "600")
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { child.Process.Kill(); child.Wait() }()
	wt := filepath.Join(ws.RepoRoot, "branches", "issue-7")
	if err := os.MkdirAll(wt, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, out, err := core.Run(ctx, govern.Request{Action: actionid.Claim, Target: govern.Target{
		Item: &govern.Item{Remote: "origin", Org: "acme", Repo: "widgets", Kind: "issue", Number: 7}, Session: "s1"},
		Params: govern.ClaimParams{PID: strconv.Itoa(child.Process.Pid), Role: "author", Worktree: wt}}, ""); err != nil || out.Result != govern.ResultSucceeded {
		t.Fatalf("claim: %v %+v", err, out)
	}
	l := live.New(live.Workspace{LocksDir: ws.LocksDir, DBPath: ws.DBPath, RepoRoot: ws.RepoRoot},
		live.Options{Resync: time.Hour, ProbeEvery: time.Hour})
	if err := l.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	want := func(state string) {
		t.Helper()
		waitFor(t, l, "worktree "+state, func(s *model.Snapshot) bool { return worktreeSeen(s) == state })
	}
	want(string(model.WorktreePresent))
	if err := os.RemoveAll(wt); err != nil {
		t.Fatal(err)
	}
	want(string(model.WorktreeMissing))
	if err := os.MkdirAll(wt, 0o700); err != nil {
		t.Fatal(err)
	}
	want(string(model.WorktreePresent))
}
