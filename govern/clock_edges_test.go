package govern

import (
	"context"
	"os"
	"testing"
	"time"

	"steward/govern/actionid"
	"steward/leases/leasestest"
)

// expiredLease is lease L1 of item 1, expired a minute before now0, its owner this process.
func expiredLease(f *fixture, heartbeat time.Duration) leasestest.Lease {
	return leasestest.Lease{LeaseID: "L1", SessionID: "s-L1", Role: "author", TaskClass: "author_issue_work", Work: work(1),
		CreatedAt: ts(-20 * time.Minute), ExpiresAt: ts(-time.Minute), LastHeartbeatAt: ts(heartbeat),
		OwnerPID: int64(os.Getpid()), OwnerHost: f.host()}
}

// jumpedCore gives f a core whose wall clock then moves by wall while the monotonic clock
// sees passed go by.
func jumpedCore(f *fixture, wall, passed time.Duration) {
	mono := &monotonic{}
	f.core = New(f.ws, f.audit, Options{Actor: Actor{OSUser: "tester", Host: f.ws.Host, Role: RoleOperator},
		Now: f.clock.Now, Elapsed: mono.elapsed})
	f.t.Cleanup(func() { f.core.Close() })
	f.clock.Add(wall)
	mono.d = passed
}

// TestClockTrustedUpToTheTolerance: on SQLite the reclaim of an expired lease goes through
// while this host's clock is within clockTolerance of the truth — a jump of exactly the
// tolerance against the monotonic clock (clock.go:61), a record exactly the tolerance in
// its future (clock.go:75) — and is refused clock_untrusted a nanosecond past it.
func TestClockTrustedUpToTheTolerance(t *testing.T) {
	ctx := context.Background()
	reclaim := Request{Action: actionid.ReclaimExpired, Target: Target{LeaseID: "L1"}}
	cases := []struct {
		desc      string
		jump      time.Duration // how far the wall clock runs ahead of the monotonic one
		heartbeat time.Duration // the lease's last heartbeat, against the clock's now
		untrusted bool
	}{
		{"a jump of exactly the tolerance", clockTolerance, -10 * time.Minute, false},
		{"a jump a nanosecond past it", clockTolerance + time.Nanosecond, -10 * time.Minute, true},
		{"a heartbeat exactly the tolerance ahead", 0, clockTolerance, false},
		{"a heartbeat a microsecond past it", 0, clockTolerance + time.Microsecond, true},
	}
	for _, tc := range cases {
		t.Run(tc.desc, func(t *testing.T) {
			f := newFixture(t, RoleOperator)
			f.insert(expiredLease(f, tc.heartbeat+time.Minute))
			// A minute really passes; the wall clock moves that much plus the jump.
			jumpedCore(f, time.Minute+tc.jump, time.Minute)
			pv, err := f.core.Preview(ctx, reclaim)
			if err != nil {
				t.Fatal(err)
			}
			if got := pv.Refusal != nil && pv.Refusal.Code == codeClockUntrusted; got != tc.untrusted {
				t.Fatalf("refused %s = %v, want %v (allowed=%v, refusal %+v)", codeClockUntrusted, got, tc.untrusted,
					pv.Allowed, pv.Refusal)
			}
			if !tc.untrusted && !pv.Allowed {
				t.Fatalf("reclaim of an expired lease not allowed: %+v", pv.Refusal)
			}
		})
	}
}

// TestPostgresReclaimIgnoresAJumpedHostClock: on PostgreSQL the DB's clock judges the
// expiry, so this host's clock having jumped 5 minutes does not hold off the reclaim of a
// lease the DB sees expired (clock.go:32: a reader that opens is the DB's clock).
func TestPostgresReclaimIgnoresAJumpedHostClock(t *testing.T) {
	f := newFixtureOn(t, RoleOperator, "postgres")
	f.insert(expiredLease(f, -10*time.Minute))
	jumpedCore(f, 5*time.Minute, time.Second)
	pv, err := f.core.Preview(context.Background(), Request{Action: actionid.ReclaimExpired, Target: Target{LeaseID: "L1"}})
	if err != nil || !pv.Allowed {
		t.Fatalf("reclaim of a lease expired by the DB's clock: allowed=%v %+v %v", pv.Allowed, pv.Refusal, err)
	}
}
