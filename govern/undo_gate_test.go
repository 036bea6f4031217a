package govern

import (
	"context"
	"testing"

	"steward/govern/actionid"
)

// TestUndoRunsItsInverseThroughTheInversesGate: an undo applies the recorded inverse only
// as far as the caller may run that action itself. An audit log (another steward's) records
// an attempt whose inverse is a heartbeat of session s2's lease: the plain core may undo it,
// a core bound to session s1 is refused not_owner like the heartbeat itself would be
// (actions_undo.go:103).
func TestUndoRunsItsInverseThroughTheInversesGate(t *testing.T) {
	f := newFixture(t, RoleOperator)
	ctx := context.Background()
	out := f.claim("s2", 7)
	// recorded is a succeeded attempt whose inverse heartbeats lease id of session s2.
	recorded := func(id string) string {
		inv := &Request{Action: actionid.Heartbeat, Target: Target{LeaseID: id, Session: "s2"}}
		base := Record{At: stamp(now0), Attempt: NewAttemptID(now0), Action: actionid.Heartbeat, Target: inv.Target,
			Actor: f.core.actor}
		intent, outcome := base, base
		intent.Kind, intent.Inverse = KindIntent, inv
		outcome.Kind, outcome.Result, outcome.Disposition, outcome.Inverse = KindOutcome, ResultSucceeded, dispositionApplied, inv
		for _, r := range []Record{intent, outcome} {
			if err := f.audit.Append(r); err != nil {
				t.Fatal(err)
			}
		}
		return base.Attempt
	}
	live, gone := recorded(out.Detail["lease_id"]), recorded("L-gone")
	cases := []struct {
		desc    string
		core    *Core
		attempt string
		code    string // "" when allowed
	}{
		{"the operator's own core", f.core, live, ""},
		{"a core bound to another session", f.core.ForSession("s1"), live, CodeNotOwner},
		// Both refuse: the inverse's own refusal, which says what is wrong with it, is kept.
		{"bound to another session, the lease gone", f.core.ForSession("s1"), gone, CodeNotFound},
	}
	for _, tc := range cases {
		t.Run(tc.desc, func(t *testing.T) {
			pv, err := tc.core.Preview(ctx, Request{Action: actionid.Undo, Target: Target{Attempt: tc.attempt}})
			if err != nil {
				t.Fatal(err)
			}
			code := ""
			if pv.Refusal != nil {
				code = pv.Refusal.Code
			}
			if code != tc.code || pv.Allowed != (tc.code == "") {
				t.Fatalf("undo: allowed=%v refusal %+v; want code %q", pv.Allowed, pv.Refusal, tc.code)
			}
		})
	}
}
