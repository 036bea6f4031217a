package leaserec

import "testing"

// The reason a policy was chosen names the lease's role and the kind of item it holds,
// and says so when the kind is unknown rather than naming an empty kind (policy.go:295).
func TestPolicyReasonNamesTheItemKind(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		role string
		kind WorkKind
		why  string
	}{
		{"reviewer", KindPR, `role "reviewer" on a pr (no task_class recorded)`},
		{"author", "", `role "author" on an item of unknown kind matches no row of the seed's policy table: ` +
			`read conservatively (no absolute cap, no missed-heartbeat staleness)`},
		{"controller", KindPR, `role "controller" on a pr matches no row of the seed's policy table: ` +
			`read conservatively (no absolute cap, no missed-heartbeat staleness)`},
	} {
		l := Lease{LeaseID: "l", Status: StatusActive, Role: c.role, Work: WorkRef{Kind: c.kind, Number: 1}}
		if _, why := DefaultPolicies().ForLease(l); why != c.why {
			t.Errorf("%s on %q: reason %q; want %q", c.role, c.kind, why, c.why)
		}
	}
}
