package model

import (
	"reflect"
	"testing"

	"steward/govern/actionid"
)

func TestIncidentsGroupADeadWorkersOrphans(t *testing.T) {
	it := func(n int64) *Item { return &Item{Kind: "issue", Number: n, Org: "acme", Repo: "widgets"} }
	act := &ActionRef{ID: actionid.RetireLock}
	o := func(k OrphanKind, sess string, item *Item, a *ActionRef) *Orphan {
		return &Orphan{Kind: k, SessionID: sess, Item: item, Action: a, LeaseID: "L-" + sess, LockFile: string(k)}
	}
	type want struct {
		session string
		items   []string
		parts   []OrphanKind
	}
	for _, tc := range []struct {
		name     string
		orphans  []*Orphan
		sessions []*Session
		want     []want
	}{
		{"lease and lock of one dead worker are one incident",
			[]*Orphan{o(OrphanStaleLeaseDeadOwner, "S1", it(7), act), o(OrphanLiveLockDeadOwner, "S1", it(7), act)}, nil,
			[]want{{"S1", []string{"acme/widgets#7"}, []OrphanKind{OrphanStaleLeaseDeadOwner, OrphanLiveLockDeadOwner}}}},
		{"several items of one dead worker group under it, in item order",
			[]*Orphan{o(OrphanLiveLockDeadOwner, "S1", it(9), act), o(OrphanStaleLockDeadOwner, "S1", it(7), act), o(OrphanStaleLeaseDeadOwner, "S1", it(9), act)}, nil,
			[]want{{"S1", []string{"acme/widgets#7", "acme/widgets#9"}, []OrphanKind{OrphanLiveLockDeadOwner, OrphanStaleLockDeadOwner, OrphanStaleLeaseDeadOwner}}}},
		{"two dead workers are two incidents, in session order",
			[]*Orphan{o(OrphanLiveLockDeadOwner, "S2", it(8), act), o(OrphanLiveLockDeadOwner, "S1", it(7), act)}, nil,
			[]want{{"S1", []string{"acme/widgets#7"}, []OrphanKind{OrphanLiveLockDeadOwner}}, {"S2", []string{"acme/widgets#8"}, []OrphanKind{OrphanLiveLockDeadOwner}}}},
		{"a dead worker's expired lease is a part of its incident",
			[]*Orphan{o(OrphanActiveLeasePastExpiry, "S1", it(7), act), o(OrphanStaleLockDeadOwner, "S1", it(7), act)}, nil,
			[]want{{"S1", []string{"acme/widgets#7"}, []OrphanKind{OrphanActiveLeasePastExpiry, OrphanStaleLockDeadOwner}}}},
		{"an expired lease with no proof of death is no incident",
			[]*Orphan{o(OrphanActiveLeasePastExpiry, "S1", it(7), act)}, []*Session{{SessionID: "S1", Liveness: LivenessUnknown}}, nil},
		{"an expired lease of a session proven dead is its incident",
			[]*Orphan{o(OrphanActiveLeasePastExpiry, "S1", it(7), act)}, []*Session{{SessionID: "S1", Liveness: LivenessDead}},
			[]want{{"S1", []string{"acme/widgets#7"}, []OrphanKind{OrphanActiveLeasePastExpiry}}}},
		{"an inspect-only orphan is no part",
			[]*Orphan{o(OrphanLiveLockDeadOwner, "S1", it(7), act), o(OrphanPendingHandoffUnconsumed, "S1", it(7), nil)}, nil,
			[]want{{"S1", []string{"acme/widgets#7"}, []OrphanKind{OrphanLiveLockDeadOwner}}}},
		{"no session, no incident",
			[]*Orphan{o(OrphanLiveLockDeadOwner, "", it(7), act)}, nil, nil},
		{"no item, no incident",
			[]*Orphan{o(OrphanStaleLeaseDeadOwner, "S1", nil, act)}, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []want
			for _, in := range Incidents(tc.orphans, tc.sessions) {
				if in.Kind != incidentDeadWorker || in.Key() != "dead-worker:"+in.SessionID {
					t.Errorf("incident %+v: kind or key wrong", in)
				}
				w := want{session: in.SessionID}
				for _, x := range in.Items {
					w.items = append(w.items, x.String())
				}
				for _, p := range in.Orphans {
					w.parts = append(w.parts, p.Kind)
				}
				got = append(got, w)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}
