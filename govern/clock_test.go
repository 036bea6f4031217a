package govern

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"steward/govern/actionid"
	"steward/leases"
	"steward/leases/leaserec"
	"steward/leases/leasestest"
	"steward/locks"
)

// TestOneRecordOneClock: on PostgreSQL every lease timestamp is the database's clock, so
// every timestamp steward writes into a lock of that lease must be too — on a host whose
// clock is 5 minutes fast. Before the fix a heartbeat wrote the lock's last_heartbeat_at
// from this host's clock beside an expires_at from the DB's (the lock said its last
// heartbeat came 5 minutes after the lease's), and an archive's archived_at was this
// host's clock beside the lease's ended_at from the DB's.
func TestOneRecordOneClock(t *testing.T) {
	f := newFixtureOn(t, RoleOperator, "postgres")
	f.clock.Add(5 * time.Minute) // this host's clock runs 5 minutes ahead of the DB's
	out := f.claim("s1", 7)
	id, name := out.Detail["lease_id"], out.Detail["lock_file"]
	ctx := context.Background()
	lockTimes := func() (hb, exp time.Time) {
		t.Helper()
		e := locks.ReadFile(f.ws.LocksDir, name)
		wl := e.Record.WorkLease
		if e.Missing || wl == nil || !wl.LastHeartbeatAt.Valid || !wl.ExpiresAt.Valid {
			t.Fatalf("lock %s: %+v", name, e)
		}
		return wl.LastHeartbeatAt.Time, wl.ExpiresAt.Time
	}
	l := f.lease(id)
	if hb, exp := lockTimes(); !exp.Equal(l.ExpiresAt.Time) || !hb.Equal(l.CreatedAt.Time) {
		t.Fatalf("claim: lock last_heartbeat_at %s expires_at %s; lease created_at %s expires_at %s", hb, exp, l.CreatedAt.Raw, l.ExpiresAt.Raw)
	}
	_, hb, err := f.core.Run(ctx, Request{Action: actionid.Heartbeat, Target: Target{LeaseID: id, Session: "s1"}}, "")
	if err != nil || hb.Result != ResultSucceeded {
		t.Fatalf("heartbeat: %+v %v", hb, err)
	}
	l = f.lease(id)
	if got, exp := lockTimes(); !got.Equal(l.LastHeartbeatAt.Time) || !exp.Equal(l.ExpiresAt.Time) {
		t.Fatalf("heartbeat on a host 5 minutes fast: lock last_heartbeat_at %s, expires_at %s; lease last_heartbeat_at %s, expires_at %s — one record, two clocks",
			got.Format(time.RFC3339Nano), exp.Format(time.RFC3339Nano), l.LastHeartbeatAt.Raw, l.ExpiresAt.Raw)
	}
	_, rel, err := f.core.Run(ctx, Request{Action: actionid.Release, Target: Target{LeaseID: id, Session: "s1"}}, "")
	if err != nil || rel.Result != ResultSucceeded {
		t.Fatalf("release: %+v %v", rel, err)
	}
	e := locks.ReadFile(f.ws.LocksDir, rel.Detail["archived_as"])
	b, ok := e.Record.Recovery()
	at := leaserec.ParseTimestamp(b.ArchivedAt)
	if !ok || !at.OK() {
		t.Fatalf("archive %s: recovery %+v ok=%v", rel.Detail["archived_as"], b, ok)
	}
	r, err := leases.OpenPGReader(ctx, f.ws.DBTarget())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	dbNow, err := r.Clock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d := dbNow.Sub(at.Time); d < 0 || d > time.Minute {
		t.Fatalf("archived_at %s, the DB's clock %s after the release: the archive was stamped from another clock than its lease's", b.ArchivedAt, dbNow.Format(time.RFC3339Nano))
	}
}

// monotonic is a test's monotonic clock: the time that really passed, which a wall clock
// that jumps leaves behind.
type monotonic struct{ d time.Duration }

func (m *monotonic) elapsed() time.Duration { return m.d }

// TestAJumpedClockNeverEndsALiveLease: on SQLite this host's clock is the only one, and a
// clock that jumped 5 minutes forward made a lease heartbeated a second ago read expired:
// the reclaim was allowed and applied. Now every destructive action whose verdict rests on
// that clock (reclaim, the expire sweep, retiring an expired lock whose owner is not proven
// dead, abandoning a lease stale by the clock) refuses clock_untrusted, writing nothing,
// when the wall clock moved ahead of the monotonic clock since steward started, or when a
// record lies in this host's future; and acts as before when neither holds. On PostgreSQL
// the DB's clock decides: the same jump changes nothing there. Each refusal case fails on
// the code before (the action was allowed).
func TestAJumpedClockNeverEndsALiveLease(t *testing.T) {
	ctx := context.Background()
	jumped := func(t *testing.T, backend string) (*fixture, *monotonic) {
		f := newFixtureOn(t, RoleOperator, backend)
		mono := &monotonic{}
		f.core = New(f.ws, f.audit, Options{Actor: Actor{OSUser: "tester", Host: f.ws.Host, Role: RoleOperator}, Now: f.clock.Now, Elapsed: mono.elapsed})
		t.Cleanup(func() { f.core.Close() })
		// A live lease, heartbeated a second ago, 4 minutes left; a lock of another item
		// that expires in 4 minutes, its owner's liveness unknown (another host).
		f.insert(leasestest.Lease{LeaseID: "L1", SessionID: "s-L1", Role: "author", TaskClass: "author_issue_work", Work: work(1),
			CreatedAt: ts(-time.Second), ExpiresAt: ts(4 * time.Minute), LastHeartbeatAt: ts(-time.Second), OwnerPID: int64(os.Getpid()), OwnerHost: f.host()})
		it := *item(4)
		l := &leaserec.Lease{CreatedAt: leaserec.ParseTimestamp(ts(-time.Second)), ExpiresAt: leaserec.ParseTimestamp(ts(4 * time.Minute))}
		rec := canonicalLock(it, "feat/issue-4", filepath.Join(f.ws.RepoRoot, "branches", "x"), "bot", "author", "s-lock", "tsk-4", 4242, "other-host.example", l)
		name, _ := locks.Name(lockKey(work(4)))
		f.writeLock(name, rec)
		// The wall clock jumps 5 minutes; one second really passes.
		f.clock.Add(5 * time.Minute)
		mono.d = time.Second
		return f, mono
	}
	name4, _ := locks.Name(lockKey(work(4)))
	reqs := map[string]Request{
		"reclaim":      {Action: actionid.ReclaimExpired, Target: Target{LeaseID: "L1"}},
		"expire sweep": {Action: actionid.ExpireSweep},
		"retire":       {Action: actionid.RetireLock, Target: Target{LockFile: name4}},
	}
	for what, req := range reqs {
		t.Run("sqlite/jump/"+what, func(t *testing.T) {
			f, _ := jumped(t, "sqlite")
			before := f.state()
			pv, err := f.core.Preview(ctx, req)
			if err != nil || pv.Allowed || pv.Refusal == nil || pv.Refusal.Code != codeClockUntrusted ||
				!strings.Contains(pv.Refusal.Message, "moved 4m59s ahead") || !strings.Contains(pv.Refusal.Message, "restart steward") {
				t.Fatalf("%s after a 5-minute jump: allowed=%v %+v %v; want refused %s", what, pv.Allowed, pv.Refusal, err, codeClockUntrusted)
			}
			if f.state() != before {
				t.Fatal("the refused preview changed the workspace")
			}
			// The apply records its refusal in the audit log and changes no source.
			sources := func() string {
				return strings.Join(slices.DeleteFunc(strings.Split(f.state(), "\n"), func(l string) bool { return strings.HasPrefix(l, filepath.Dir(f.audit.Path())) }), "\n")
			}
			src := sources()
			if out := f.core.Apply(ctx, pv, pv.ConfirmPhrase); out.Result != ResultRefused || out.Code != codeClockUntrusted || sources() != src {
				t.Fatalf("apply: %+v; a source changed: %v", out, sources() != src)
			}
		})
	}
	t.Run("sqlite/no jump: the reclaim of an expired lease still goes through", func(t *testing.T) {
		f, mono := jumped(t, "sqlite")
		mono.d = 5*time.Minute + time.Second // the time really passed
		if _, out, err := f.core.Run(ctx, reqs["reclaim"], ""); err != nil || out.Result != ResultSucceeded {
			t.Fatalf("reclaim after 5 minutes really passed: %+v %v", out, err)
		}
	})
	t.Run("sqlite/a record in this host's future", func(t *testing.T) {
		f := newFixture(t, RoleOperator)
		// Expired by this clock, but its last heartbeat was written 5 minutes ahead of it:
		// the clock went back since, or the writer's runs ahead.
		f.insert(leasestest.Lease{LeaseID: "L1", SessionID: "s-L1", Role: "author", TaskClass: "author_issue_work", Work: work(1),
			CreatedAt: ts(-20 * time.Minute), ExpiresAt: ts(-time.Minute), LastHeartbeatAt: ts(5 * time.Minute), OwnerPID: int64(os.Getpid()), OwnerHost: f.host()})
		before := f.state()
		pv, err := f.core.Preview(ctx, reqs["reclaim"])
		if err != nil || pv.Refusal == nil || pv.Refusal.Code != codeClockUntrusted || !strings.Contains(pv.Refusal.Message, "last_heartbeat_at") ||
			!strings.Contains(pv.Refusal.Message, "5m00s in this host's future") {
			t.Fatalf("reclaim with a heartbeat in the future: %+v %v; want refused %s", pv.Refusal, err, codeClockUntrusted)
		}
		if f.state() != before {
			t.Fatal("the refused preview changed the workspace")
		}
	})
	t.Run("postgres/jump: the DB's clock decides", func(t *testing.T) {
		f, _ := jumped(t, "postgres")
		pv, err := f.core.Preview(ctx, reqs["reclaim"])
		if err != nil || pv.Refusal == nil || pv.Refusal.Code == codeClockUntrusted {
			t.Fatalf("reclaim on PostgreSQL after this host's clock jumped: %+v %v; want the DB's verdict (not expired)", pv.Refusal, err)
		}
	})
}
