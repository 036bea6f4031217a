package govern

import (
	"context"
	"strings"
	"testing"
	"time"

	"steward/govern/actionid"
	"steward/leases/leasestest"
)

// TestLeaseWithoutOwnerPIDIsNotProvenByPID: a lease that records no owner process (pid 0,
// as a tool other than steward may write it) on this host cannot be bound to, nor proven
// by, the caller's process: on the command line's core the caller's pid is no reason to
// refuse, and on a core that demands proof the refusal asks for the claim token — it never
// claims the lease belongs to "process 0" (claimtoken.go:105: only a pid above zero is an
// owner process).
func TestLeaseWithoutOwnerPIDIsNotProvenByPID(t *testing.T) {
	f := newFixture(t, RoleOperator)
	f.insert(leasestest.Lease{LeaseID: "L1", SessionID: "s-L1", Role: "author", TaskClass: "author_issue_work", Work: work(1),
		CreatedAt: ts(-time.Minute), ExpiresAt: ts(9 * time.Minute), LastHeartbeatAt: ts(-time.Minute),
		OwnerPID: 0, OwnerHost: f.host()})
	if l := f.lease("L1"); l.OwnerPID != 0 || l.OwnerHost != f.ws.host() {
		t.Fatalf("lease owner pid %d host %q, want none on this host", l.OwnerPID, l.OwnerHost)
	}
	req := Request{Action: actionid.Heartbeat, Target: Target{LeaseID: "L1", Session: "s-L1"},
		Params: OwnLeaseParams{OwnerProof: OwnerProof{CallerPID: "4242"}}}
	cases := []struct {
		desc    string
		core    *Core
		refused bool
	}{
		{"the command line's core", f.core, false},
		{"a core demanding proof", f.core.WithOwnerProof(), true},
	}
	for _, tc := range cases {
		t.Run(tc.desc, func(t *testing.T) {
			pv, err := tc.core.ForSession("s-L1").Preview(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			notOwner := pv.Refusal != nil && pv.Refusal.Code == CodeNotOwner
			if notOwner != tc.refused {
				t.Fatalf("refused not_owner = %v, want %v: %+v", notOwner, tc.refused, pv.Refusal)
			}
			if notOwner && (!strings.Contains(pv.Refusal.Message, "pass the claim_token") ||
				strings.Contains(pv.Refusal.Message, "process 0")) {
				t.Fatalf("refusal %q: want it to ask for the claim token, naming no owner process", pv.Refusal.Message)
			}
		})
	}
}
