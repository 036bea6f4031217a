package live_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"steward/govern"
	"steward/govern/actionid"
	"steward/model"
	"steward/model/live"
)

// clock is a settable test clock shared by the core and Live.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func kindsOf(s *model.Snapshot) map[model.OrphanKind]*model.Orphan {
	m := map[model.OrphanKind]*model.Orphan{}
	for _, o := range s.Orphans {
		m[o.Kind] = o
	}
	return m
}

// waitFor waits for a published snapshot satisfying ok, up to a deadline.
func waitFor(t *testing.T, l *live.Model, what string, ok func(*model.Snapshot) bool) *model.Snapshot {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		if s := l.Current(); s != nil && ok(s) {
			return s
		}
		select {
		case <-l.Snapshots():
		case <-deadline:
			t.Fatalf("timed out waiting for %s; orphans now: %v", what, kindsOf(l.Current()))
		}
	}
}

// TestEndToEnd drives real files and a real DB through the governed core and
// checks the live snapshot after each step.
func TestEndToEnd(t *testing.T) {
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
	clk := &clock{t: time.Date(2026, 7, 23, 10, 0, 0, 0, time.UTC)}
	core := govern.New(ws, audit, govern.Options{Actor: govern.LocalActor(govern.RoleOperator, "tester"), Now: clk.Now})
	defer core.Close()
	ctx := context.Background()

	child := exec.Command("sleep", "600")
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer child.Process.Kill()
	wt := filepath.Join(ws.RepoRoot, "branches", "issue-7")
	if err := exec.Command("mkdir", "-p", wt).Run(); err != nil {
		t.Fatal(err)
	}

	live := live.New(live.Workspace{LocksDir: ws.LocksDir, DBPath: ws.DBPath, RepoRoot: ws.RepoRoot},
		live.Options{Now: clk.Now, Resync: time.Hour, ProbeEvery: time.Hour})
	if err := live.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer live.Close()

	// 1. claim → one live claim, no orphans.
	_, out, err := core.Run(ctx, govern.Request{Action: actionid.Claim, Target: govern.Target{
		Item: &govern.Item{Remote: "origin", Org: "acme", Repo: "widgets", Kind: "issue", Number: 7}, Session: "s1"},
		Params: govern.ClaimParams{PID: strconv.Itoa(child.Process.Pid), Role: "author", Worktree: wt}}, "")
	if err != nil || out.Result != govern.ResultSucceeded {
		t.Fatalf("claim: %v %+v", err, out)
	}
	leaseID, lockFile := out.Detail["lease_id"], out.Detail["lock_file"]
	s := waitFor(t, live, "a live claim", func(s *model.Snapshot) bool {
		return len(s.Claims) == 1 && s.Claims[0].LeaseID == leaseID && s.Claims[0].LockFile == lockFile
	})
	if c := s.Claims[0]; c.OwnerLiveness != model.LivenessAlive || c.Freshness != "active" || len(s.Orphans) != 0 {
		t.Fatalf("claim = %+v, orphans %v", c, kindsOf(s))
	}

	// 2. the owner process exits → live-lock-dead-owner and stale-lease-dead-owner.
	child.Process.Kill()
	child.Wait()
	live.Refresh() // re-probes liveness now instead of waiting for the probe period
	s = waitFor(t, live, "dead-owner kinds", func(s *model.Snapshot) bool {
		k := kindsOf(s)
		return k[model.OrphanLiveLockDeadOwner] != nil && k[model.OrphanStaleLeaseDeadOwner] != nil
	})
	if o := kindsOf(s)[model.OrphanLiveLockDeadOwner]; o.Action == nil || o.Action.ID != actionid.RetireLock || o.Action.Target.LockFile != lockFile {
		t.Fatalf("live-lock-dead-owner action = %+v", o.Action)
	}

	// 3. time passes beyond the expiry → expired kinds, with no file changing:
	// the deadline heap re-derives the item.
	clk.Add(11 * time.Minute)
	live.Wake() // the test clock moved; real timers do not follow it
	s = waitFor(t, live, "expired kinds", func(s *model.Snapshot) bool {
		k := kindsOf(s)
		return k[model.OrphanActiveLeasePastExpiry] != nil && k[model.OrphanStaleLockDeadOwner] != nil && k[model.OrphanLiveLockDeadOwner] == nil
	})
	if o := kindsOf(s)[model.OrphanActiveLeasePastExpiry]; o.Action.ID != actionid.ReclaimExpired || o.Action.Target.LeaseID != leaseID {
		t.Fatalf("past-expiry action = %+v", o.Action)
	}

	// 4. reclaim the lease and retire the lock through the core → gone.
	if _, out, err := core.Run(ctx, govern.Request{Action: actionid.ReclaimExpired, Target: govern.Target{LeaseID: leaseID}}, ""); err != nil || out.Result != govern.ResultSucceeded {
		t.Fatalf("reclaim: %v %+v", err, out)
	}
	s = waitFor(t, live, "lease orphan gone", func(s *model.Snapshot) bool {
		return kindsOf(s)[model.OrphanActiveLeasePastExpiry] == nil && kindsOf(s)[model.OrphanStaleLockDeadOwner] != nil
	})
	pv, err := core.Preview(ctx, govern.Request{Action: actionid.RetireLock, Target: govern.Target{LockFile: lockFile}})
	if err != nil || !pv.Allowed {
		t.Fatalf("retire preview: %v %+v", err, pv.Refusal)
	}
	if out := core.Apply(ctx, pv, pv.ConfirmPhrase); out.Result != govern.ResultSucceeded {
		t.Fatalf("retire: %+v", out)
	}
	waitFor(t, live, "everything reconciled", func(s *model.Snapshot) bool {
		return len(s.Orphans) == 0 && len(s.Claims) == 0
	})
}
