package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"steward/attention/store"
	"steward/govern"
	"steward/leases/leaserec"
	"steward/leases/leasestest"
	"steward/locks/lockrec"
)

// TestWatchRestartNotifiesNothingAgain runs `steward watch --json` as a process on one
// unchanged collision (two live locks of one item) with a notify command that records its
// runs, and restarts it four times (SIGTERM, start again, as systemd's Restart= does). The
// collision is notified exactly once: no restarted watch prints it `entered` again or runs
// the command for it, and its "first seen" — kept in the attention state beside the
// attention file — is the first watch's. Each restarted watch is known to have heard its
// first snapshot when the new orphan the test adds after its start is printed (events come
// in snapshot order). Before the fix every restart printed the collision `entered` with
// notify true and ran the command again (5 runs), its first-seen time the restart's.
func TestWatchRestartNotifiesNothingAgain(t *testing.T) {
	dir := t.TempDir()
	ws := govern.Workspace{LocksDir: filepath.Join(dir, "locks"), DBPath: filepath.Join(dir, "db", "cp.sqlite3"), RepoRoot: filepath.Join(dir, "repo")}
	if err := govern.InitWorkspace(ws); err != nil {
		t.Fatal(err)
	}
	writeLiveLock(t, ws.LocksDir, "a.json", 7, "s-a")
	writeLiveLock(t, ws.LocksDir, "b.json", 7, "s-b")
	calls := filepath.Join(dir, "notify-calls")
	script := filepath.Join(dir, "record-notify")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nprintf '%s %s\\n' \"$STEWARD_EVENT\" \"$STEWARD_KEY\" >> \""+calls+"\"\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	audit := filepath.Join(dir, "state", "audit.jsonl")
	args := []string{"--tick", "100ms", "--locks", ws.LocksDir, "--db", ws.DBPath, "--repo-root", ws.RepoRoot, "--audit", audit}
	env := `STEWARD_NOTIFY_COMMAND=["` + script + `"]`
	const key = "collision:duplicate-live-lock:acme/widgets#7"
	isCollision := func(e watchEvent) bool { return e.Entry.Key == key }

	w := startWatch(t, false, args, env)
	first := w.await("the collision entered", func(e watchEvent) bool { return isCollision(e) && e.Event == "entered" })
	if !first.Notify {
		t.Fatalf("the collision does not notify: %q", first.raw)
	}
	waitFor(t, hang, "the notify command's run", func() bool { b, _ := os.ReadFile(calls); return strings.Count(string(b), "\n") == 1 })
	var since time.Time
	for i := 1; i <= 4; i++ {
		w.stop()
		w = startWatch(t, false, args, env)
		w.await("watching", func(e watchEvent) bool { return e.Event == "watching" })
		lease := fmt.Sprintf("L%d", i)
		exp := leaserec.FormatTime(time.Now().Add(-time.Hour))
		leasestest.Insert(t, ws.DBPath, []leasestest.Session{{SessionID: "s-" + lease, Role: "author"}},
			[]leasestest.Lease{{LeaseID: lease, SessionID: "s-" + lease, Role: "author", TaskClass: "author_issue_work",
				Work: leasestest.Work(leaserec.KindIssue, int64(100+i)), CreatedAt: exp, ExpiresAt: exp}})
		ins := time.Now()
		o := w.await("the new orphan "+lease, func(e watchEvent) bool {
			return e.Event == "entered" && strings.Contains(e.Entry.Key, lease)
		})
		t.Logf("restart %d: orphan after %s", i, o.at.Sub(ins))
		for _, e := range w.seen {
			if isCollision(e) {
				t.Fatalf("restart %d: the unchanged collision was heard again: %q", i, e.raw)
			}
		}
		if got := stateSince(t, audit, key); i == 1 {
			since = got
			if d := got.Sub(first.at); d > time.Second || d < -time.Second {
				t.Fatalf("the collision's first-seen time %s is not the first watch's (%s)", got, first.at)
			}
		} else if !got.Equal(since) {
			t.Fatalf("restart %d: the collision's first-seen time moved from %s to %s", i, since, got)
		}
	}
	w.stop()
	b, err := os.ReadFile(calls)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(b)); got != "entered "+key {
		t.Fatalf("the notify command ran %d times over 5 starts: %q; want once for the collision", strings.Count(got, "\n")+1, got)
	}
}

// stateSince reads the attention state `steward watch` keeps beside the audit log at audit
// and returns the entry key's first-seen time.
func stateSince(t *testing.T, audit, key string) time.Time {
	t.Helper()
	st, err := store.Load(store.Path(audit, store.Surface(store.SurfaceWatch, "default")))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range st.Entries {
		if r.Entry.Key == key {
			return r.Entry.Since
		}
	}
	t.Fatalf("no %s in the attention state: %+v", key, st)
	return time.Time{}
}

// writeLiveLock writes a canonical lock on acme/widgets#n held by session, live for a day.
func writeLiveLock(t *testing.T, dir, name string, n int64, session string) {
	t.Helper()
	one := int64(1)
	now := time.Now()
	rec := lockrec.Record{Remote: "origin", Org: "acme", Repo: "widgets", IssueNumber: &n, BranchName: "feat/x", Branch: "feat/x",
		WorkLease: &lockrec.WorkLease{OperationType: "author_issue_work", IssueNumber: &n, Branch: "feat/x",
			Claimant: &lockrec.Claimant{Username: "bot", Profile: "p"}, CreatedAt: lockrec.NewTimestamp(now), ExpiresAt: lockrec.NewTimestamp(now.Add(24 * time.Hour)),
			LastHeartbeatAt: lockrec.NewTimestamp(now), HeartbeatCount: &one, TaskSessionID: "tsk-" + session, LifecycleVersion: "heartbeat-v1"},
		LockProvenance: &lockrec.Provenance{Source: "gitea_lock_issue", WrittenByTool: "steward"}, OwnerSession: session}
	b, err := lockrec.Marshal(&rec)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
		t.Fatal(err)
	}
}
