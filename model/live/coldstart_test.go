package live

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"steward/leases"
	"steward/leases/leaserec"
	"steward/leases/leasestest"
	"steward/locks"
	"steward/locks/lockrec"
	"steward/model"
)

// TestColdStartIsColdRead: Start reads the lock files beside the DB and probes owners and
// worktrees on every core (enough records for several workers); its first snapshot is
// what a cold read of the same workspace builds (Load + model.Build, one record at a
// time) — every claim, orphan and session with the same verdicts — here with locks that a
// lease joins, locks without a lease row, leases without a lock, dead and live owners and
// missing worktrees.
func TestColdStartIsColdRead(t *testing.T) {
	const n = 200
	now := leasestest.Now
	var sessions []leasestest.Session
	var ls []leasestest.Lease
	for i := 1; i <= n; i++ {
		sid := fmt.Sprintf("s%d", i)
		sessions = append(sessions, leasestest.Session{SessionID: sid, Role: "author", Profile: "p", PID: int64(1000 + i), Host: "here"})
		if i%5 == 0 {
			continue // a lock whose lease the DB does not hold
		}
		ls = append(ls, leasestest.Lease{LeaseID: fmt.Sprintf("lease-%d", i), SessionID: sid, Role: "author", TaskClass: "author_issue_work",
			Status: leaserec.StatusActive, Work: leaserec.WorkRef{Remote: "origin", Org: "acme", Repo: "widgets", Kind: "issue", Number: int64(i)},
			ExpiresAt: leaserec.FormatTime(now.Add(time.Hour)), LastHeartbeatAt: leaserec.FormatTime(now),
			OwnerPID: int64(1000 + i), OwnerHost: "here", WorktreePath: fmt.Sprintf("/repo/branches/w%d", i)})
	}
	dir := t.TempDir()
	ws := Workspace{LocksDir: filepath.Join(dir, "locks"), RepoRoot: filepath.Join(dir, "repo"), DBPath: leasestest.NewDB(t, sessions, ls)}
	if err := os.MkdirAll(ws.LocksDir, 0o700); err != nil {
		t.Fatal(err)
	}
	for i := int64(1); i <= n; i++ {
		if i%7 == 0 {
			continue // a lease without a lock file
		}
		num, pid, one := i, 1000+i, int64(1)
		c := lockrec.NewTimestamp(now)
		wt := fmt.Sprintf("/repo/branches/w%d", i)
		rec := lockrec.Record{Remote: "origin", Org: "acme", Repo: "widgets", IssueNumber: &num, BranchName: "b", Branch: "b", WorktreePath: wt,
			PID: &pid, OwnerSession: fmt.Sprintf("s%d", i), LeaseID: fmt.Sprintf("lease-%d", i),
			LockProvenance: &lockrec.Provenance{Source: "gitea_lock_issue", WrittenByTool: "test"},
			WorkLease: &lockrec.WorkLease{OperationType: "author_issue_work", IssueNumber: &num, Branch: "b", WorktreePath: wt,
				Claimant: &lockrec.Claimant{Username: "u", Profile: "p"}, CreatedAt: c, ExpiresAt: lockrec.NewTimestamp(now.Add(time.Hour)), LastHeartbeatAt: c,
				HeartbeatCount: &one, TaskSessionID: "t", LifecycleVersion: "heartbeat-v1"},
			Extra: []lockrec.RawField{{Key: "host", Value: []byte(`"here"`)}}}
		data, err := lockrec.Marshal(&rec)
		if err != nil {
			t.Fatal(err)
		}
		name, _ := locks.Name(lockrec.Key{Remote: "origin", Org: "acme", Repo: "widgets", Issue: i})
		if err := os.WriteFile(filepath.Join(ws.LocksDir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// Deterministic and safe for concurrent use: every third pid dead, every fourth
	// worktree missing.
	probe := Probe{Host: "here",
		Liveness: func(pid int, _ string) leaserec.ProcessState {
			if pid%3 == 0 {
				return leaserec.ProcessDead
			}
			return leaserec.ProcessAlive
		},
		Worktree: func(path, _ string) leases.WorktreeReport {
			if strings.HasSuffix(path, "0") || strings.HasSuffix(path, "4") || strings.HasSuffix(path, "8") {
				return leases.WorktreeReport{State: leaserec.WorktreeMissing, Why: path + " does not exist", Looked: true}
			}
			return leases.WorktreeReport{State: leaserec.WorktreePresent, Why: path + " exists", Looked: true}
		}}
	l := New(ws, Options{Probe: &probe, Now: func() time.Time { return now }, ProbeEvery: time.Hour, Resync: time.Hour})
	if err := l.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	s := l.Current()
	cold := model.Build(Load(context.Background(), ws, probe, now), model.Config{}, now)
	if got, want := canon(t, s), canon(t, cold); got != want {
		t.Fatalf("the first snapshot differs from a cold read:\nlive: %s\ncold: %s", got, want)
	}
	dead := 0
	for _, c := range s.Claims {
		if c.OwnerLiveness == model.LivenessDead {
			dead++
		}
	}
	if len(s.Claims) != n-n/35 || dead == 0 || dead == n || len(s.Orphans) == 0 {
		t.Fatalf("a fixture that proves little: %d claims (want %d), %d with a dead owner, %d orphans", len(s.Claims), n-n/35, dead, len(s.Orphans))
	}
}
