// Command mkworkspace writes the sample workspace in testdata/workspace that
// the README's run target reads: a control-plane DB and lock files created
// through the governed core at a fixed clock (2026-07-23T10:00:00Z), so that
// `steward status --now 2026-07-23T10:05:00Z` shows several orphan kinds and a
// contention. Two lock fixtures the core would never write (a legacy lock and
// a torn file) are copied from testdata/locks.
//
//	go run ./internal/mkworkspace [-out testdata/workspace]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"steward/govern"
	"steward/govern/actionid"
)

// T0 is the fixed clock the workspace is written at.
var T0 = time.Date(2026, 7, 23, 10, 0, 0, 0, time.UTC)

func main() {
	out := flag.String("out", "testdata/workspace", "workspace directory (replaced)")
	flag.Parse()
	if err := run(*out); err != nil {
		fmt.Fprintln(os.Stderr, "mkworkspace:", err)
		os.Exit(1)
	}
}

func run(out string) error {
	if err := os.RemoveAll(out); err != nil {
		return err
	}
	abs, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	ws := govern.Workspace{LocksDir: filepath.Join(abs, "locks"), DBPath: filepath.Join(abs, "control_plane.sqlite3"),
		RepoRoot: filepath.Join(abs, "repo")}
	if err := govern.InitWorkspace(ws); err != nil {
		return err
	}
	audit, err := govern.OpenAudit(filepath.Join(os.TempDir(), "mkworkspace-audit.jsonl"), nil)
	if err != nil {
		return err
	}
	defer audit.Close()
	clock := T0
	core := govern.New(
		ws,
		audit,
		govern.Options{
			Actor: govern.LocalActor(govern.RoleOperator, "mkworkspace"),
			Now:   func() time.Time { return clock },
		},
	)
	defer core.Close()
	ctx := context.Background()
	// A process that has exited: its pid is dead (on the host that wrote it).
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		return err
	}
	deadPID := strconv.Itoa(dead.Process.Pid)
	claim := func(n int64, session, pid, ttl, worktree string) error {
		p := govern.ClaimParams{Role: "author", PID: pid, Username: "bot-" + session, Profile: "author",
			TTL: ttl, Worktree: worktree}
		_, o, err := core.Run(ctx, govern.Request{Action: actionid.Claim, Target: govern.Target{
			Item: &govern.Item{
				Remote: "origin",
				Org:    "acme",
				Repo:   "widgets",
				Kind:   "issue",
				Number: n,
			}, Session: session}, Params: p}, "")
		if err != nil {
			return err
		}
		fmt.Printf("claim #%d by %s: %s %s\n", n, session, o.Result, o.Message)
		return nil
	}
	branches := filepath.Join(ws.RepoRoot, "branches")
	for _, d := range []string{"issue-1", "issue-2", "issue-5"} {
		if err := os.MkdirAll(filepath.Join(branches, d), 0o700); err != nil {
			return err
		}
	}
	steps := []func() error{
		// #1: healthy claim, pid unknown (0), worktree present.
		func() error { return claim(1, "prgs-author-1001-aaaa", "0", "2h", filepath.Join(branches, "issue-1")) },
		// #2: owner process gone: live-lock-dead-owner / stale-lease-dead-owner.
		func() error {
			return claim(2, "prgs-author-1002-bbbb", deadPID, "2h", filepath.Join(branches, "issue-2"))
		},
		// #3: worktree never created: stale-lease-missing-worktree / lock-without-worktree.
		func() error { return claim(3, "prgs-author-1003-cccc", "0", "2h", filepath.Join(branches, "issue-3")) },
		// #4: a short lease that has expired by 10:05: active-lease-past-expiry.
		func() error { return claim(4, "prgs-author-1004-dddd", "0", "2m", filepath.Join(branches, "issue-4")) },
		// #1 wanted by two more sessions: claim-refused contention.
		func() error { clock = T0.Add(time.Minute); return claim(1, "prgs-author-1005-eeee", "0", "", "") },
		func() error { clock = T0.Add(2 * time.Minute); return claim(1, "prgs-author-1006-ffff", "0", "", "") },
	}
	for _, s := range steps {
		if err := s(); err != nil {
			return err
		}
	}
	// Fixtures the core never writes: a legacy lock and a torn file.
	fixtures := map[string]string{
		"legacy-top-level-claimant.json": "origin__acme__widgets__issue-6.json",
		"malformed-truncated.json":       "origin__acme__widgets__issue-8.json",
	}
	for src, dst := range fixtures {
		b, err := os.ReadFile(filepath.Join("testdata", "locks", src))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(ws.LocksDir, dst), b, 0o600); err != nil {
			return err
		}
	}
	return nil
}
