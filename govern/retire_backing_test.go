package govern

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"steward/govern/actionid"
	"steward/leases/leasestest"
)

// TestRetireReadsTheLeaseTheLockNames: a retire looks up the lease the lock names, on its
// item or on another, and shows it once among its evidence: a live one there refuses the
// retire whatever the lock's own pid says; one past its expiry whose owner is dead does not;
// one the DB does not have is said to be absent.
func TestRetireReadsTheLeaseTheLockNames(t *testing.T) {
	for _, c := range []struct {
		name     string
		setup    func(f *fixture)
		allowed  bool
		evidence string // appears exactly once
	}{
		{"a lease on the lock's item, past its expiry, its owner dead", func(f *fixture) {
			f.insert(leasestest.Lease{LeaseID: "L1", SessionID: "s-L1", Role: "author", TaskClass: "author_issue_work",
				Work: work(4), CreatedAt: ts(-time.Hour), ExpiresAt: ts(-5 * time.Minute), OwnerPID: deadPID(f.t),
				OwnerHost: f.host()})
		}, true, "lease L1 (the lock names it)"},
		{"a live lease on another item", func(f *fixture) {
			f.liveLease("L1", 5, deadPID(f.t), f.host())
		}, false, "lease L1 (the lock names it)"},
		{"a lease the DB does not have", func(*fixture) {}, true, "lease L1 is not in the DB"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, RoleOperator)
			name := f.lockFile(4, -time.Minute, deadPID(t))
			c.setup(f)
			f.pointLock(name, "L1", "s-L1")
			pv, err := f.core.Preview(context.Background(), Request{Action: actionid.RetireLock, Target: Target{LockFile: name}})
			if err != nil {
				t.Fatal(err)
			}
			if pv.Allowed != c.allowed {
				t.Errorf("allowed %v (%+v), want %v", pv.Allowed, pv.Refusal, c.allowed)
			}
			if n := strings.Count(strings.Join(pv.Evidence, "\n"), c.evidence); n != 1 {
				t.Errorf("evidence %q names %q %d times, want once", pv.Evidence, c.evidence, n)
			}
		})
	}
}

// TestRetireWithUnreadableLeasesIsNotAllowed: when the DB's leases cannot be read (here its
// leases table lost its lease_id column), a retire cannot prove that no live lease backs the
// lock, and is not allowed: its preview fails, and the lock stays.
func TestRetireWithUnreadableLeasesIsNotAllowed(t *testing.T) {
	f := newFixture(t, RoleOperator)
	name := f.lockFile(4, -time.Minute, deadPID(t))
	f.exec(`ALTER TABLE leases RENAME COLUMN lease_id TO lid`)
	before := f.state()
	pv, err := f.core.Preview(context.Background(), Request{Action: actionid.RetireLock, Target: Target{LockFile: name}})
	if err == nil && pv.Allowed {
		t.Fatalf("retire over unreadable leases allowed: %+v", pv)
	}
	if f.state() != before {
		t.Error("the failed preview changed a file")
	}
}

// TestRestoreRefusedWhileALiveLockHoldsTheItem: a retired lock is restored only while
// nothing took its item since — a new live lock file for the item refuses the restore, from
// its preview on, even when no lease backs it, and the new lock stays as it is.
func TestRestoreRefusedWhileALiveLockHoldsTheItem(t *testing.T) {
	f := newFixture(t, RoleOperator)
	name := f.lockFile(4, -time.Minute, deadPID(t))
	_, ret, err := f.core.Run(context.Background(), Request{Action: actionid.RetireLock, Target: Target{LockFile: name}},
		"retire acme/widgets#4")
	if err != nil || ret.Result != ResultSucceeded {
		t.Fatalf("retire: %+v %v", ret, err)
	}
	f.lockFile(4, time.Hour, deadPID(t)) // another worker's lock since
	live := filepath.Join(f.ws.LocksDir, name)
	before, err := os.ReadFile(live)
	if err != nil {
		t.Fatal(err)
	}
	for _, req := range []Request{
		{Action: actionid.RestoreLock, Target: Target{LockFile: ret.Detail["archived"]}},
		{Action: actionid.Undo, Target: Target{Attempt: ret.Attempt}},
	} {
		pv, out, err := f.core.Run(context.Background(), req, "")
		if pv.Allowed || pv.Refusal == nil || pv.Refusal.Code != codeClaimedSince {
			t.Errorf("%s previewed with a live lock on the item: %+v, want refused %s", req.Action, pv.Refusal, codeClaimedSince)
		}
		if err != nil || out.Result != ResultRefused || out.Code != codeClaimedSince {
			t.Fatalf("%s with a live lock on the item: %+v %v, want refused %s", req.Action, out, err, codeClaimedSince)
		}
	}
	if after, err := os.ReadFile(live); err != nil || string(after) != string(before) {
		t.Errorf("the refused restore changed the live lock: %v", err)
	}
}

// TestRestoreReportsTheLockItWroteBack: restoring a retired lock while nothing took its item
// writes it back as the live lock and says so.
func TestRestoreReportsTheLockItWroteBack(t *testing.T) {
	f := newFixture(t, RoleOperator)
	name := f.lockFile(4, -time.Minute, deadPID(t))
	_, ret, err := f.core.Run(context.Background(), Request{Action: actionid.RetireLock, Target: Target{LockFile: name}},
		"retire acme/widgets#4")
	if err != nil || ret.Result != ResultSucceeded {
		t.Fatalf("retire: %+v %v", ret, err)
	}
	archived := ret.Detail["archived"]
	_, out, err := f.core.Run(context.Background(), Request{Action: actionid.RestoreLock, Target: Target{LockFile: archived}}, "")
	if err != nil || out.Result != ResultSucceeded || len(out.Effects) != 1 ||
		!strings.HasPrefix(out.Effects[0], "restored "+archived+" as "+name+" (lock_generation ") {
		t.Fatalf("restore: %+v %v, want it to say it restored %s as %s", out, err, archived, name)
	}
	if _, err := os.Stat(filepath.Join(f.ws.LocksDir, name)); err != nil {
		t.Errorf("the live lock after the restore: %v", err)
	}
}

// TestVerifyRestoreRetiredAgain: an interrupted restore is proven by its lock written back —
// also once that lock was retired again since, found among the item's archives after the
// archive it restored.
func TestVerifyRestoreRetiredAgain(t *testing.T) {
	f := newFixture(t, RoleOperator)
	name := f.lockFile(4, -time.Minute, deadPID(t))
	retire := func() Outcome {
		_, out, err := f.core.Run(context.Background(), Request{Action: actionid.RetireLock, Target: Target{LockFile: name}},
			"retire acme/widgets#4")
		if err != nil || out.Result != ResultSucceeded {
			t.Fatalf("retire: %+v %v", out, err)
		}
		return out
	}
	archived := retire().Detail["archived"]
	_, out, err := f.core.Run(context.Background(), Request{Action: actionid.RestoreLock, Target: Target{LockFile: archived}}, "")
	if err != nil || out.Result != ResultSucceeded {
		t.Fatalf("restore: %+v %v", out, err)
	}
	var intent Record
	for _, r := range f.records() {
		if r.Attempt == out.Attempt && r.Kind == KindIntent {
			intent = r
		}
	}
	retire() // the restored lock is retired again
	if res, ev, ok := (restoreLock{}).verify(context.Background(), f.core, intent); !ok || res != ResultSucceeded ||
		!strings.Contains(strings.Join(ev, " "), "archived again since") {
		t.Fatalf("verify of the restore: %s %v settled=%v, want succeeded (archived again since)", res, ev, ok)
	}
}
