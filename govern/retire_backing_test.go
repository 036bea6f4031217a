package govern

import (
	"context"
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
