package model

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"steward/leases/leaserec"
)

// TestLeaseStoreKeepsWhatTheDerivationReads: a lease row held by a LeaseStore decodes to
// the row as read, every field set, but for its provenance, of which it keeps the keys of
// a pending handoff (what pendingHandoff reads) and not the text.
func TestLeaseStoreKeepsWhatTheDerivationReads(t *testing.T) {
	at := func(s string) leaserec.Timestamp {
		tm, _ := time.Parse(time.RFC3339Nano, s)
		return leaserec.Timestamp{Raw: s, Time: tm, State: leaserec.TimeRecorded}
	}
	full := LeaseObs{
		Lease: leaserec.Lease{LeaseID: "lease-1", WorkItemID: 7, SessionID: "sess-1", Role: "author",
			TaskClass: "author_issue_work", Phase: "allocated", Status: leaserec.StatusActive, StatusRaw: "ACTIVE",
			CreatedAt: at("2026-07-23T10:00:00.5Z"), ExpiresAt: at("2026-07-23T12:00:00+02:00"),
			LastHeartbeatAt: leaserec.Timestamp{Raw: "yesterday", State: "unparseable"}, HeartbeatCount: 3,
			ExpectedHeadSHA: "abc", AllowedActions: []string{"push"}, ForbiddenActions: []string{},
			ProvenanceRaw: `{"cross_role_handoff":1,"handoff_status":"pending","required_role":"reviewer","x":[1]}`,
			Provenance: map[string]any{"cross_role_handoff": float64(1), "handoff_status": "pending",
				"required_role": "reviewer", "x": []any{float64(1)}},
			OwnerPID: 42, OwnerHost: "vm", WorktreePath: "/r/branches/x", AdoptedBySessionID: "s2",
			AdoptedFromSessionID: "s0", EndReason: "why", Generation: 9, HasGeneration: true,
			Work:     leaserec.WorkRef{Remote: "origin", Org: "Acme", Repo: "w", Kind: "issue", Number: 7},
			Problems: []string{"expires_at: not a timestamp"}},
		Host: "vm", Owner: LivenessDead, OwnerWhy: "kill", OtherHost: true, Worktree: WorktreeMissing, WorkWhy: "gone",
	}
	bare := LeaseObs{Lease: leaserec.Lease{LeaseID: "lease-2", Provenance: map[string]any{"cross_role_handoff": false}}}
	none := LeaseObs{Lease: leaserec.Lease{LeaseID: "lease-3"}}
	st := NewLeaseStore()
	for _, lo := range []*LeaseObs{&full, &bare, &none} {
		st.Add(lo)
	}
	want := func(lo LeaseObs, prov map[string]any) LeaseObs {
		lo.Lease.ProvenanceRaw, lo.Lease.Provenance = "", prov
		return lo
	}
	check := func(when string) {
		for _, c := range []struct {
			id         string
			want, read LeaseObs
		}{
			{"lease-1", want(full, map[string]any{"cross_role_handoff": true, "handoff_status": "pending",
				"required_role": "reviewer"}), full},
			{"lease-2", want(bare, map[string]any{}), bare},
			{"lease-3", none, none},
		} {
			got, ok := st.byLeaseID(c.id)
			if !ok {
				t.Fatalf("%s: %s not held", when, c.id)
			}
			for _, ts := range []*leaserec.Timestamp{&got.Lease.CreatedAt, &got.Lease.ExpiresAt, &c.want.Lease.CreatedAt,
				&c.want.Lease.ExpiresAt} {
				if !ts.Time.IsZero() {
					ts.Time = ts.Time.UTC() // the instant is kept; its zone's name is not
				}
			}
			if !reflect.DeepEqual(*got, c.want) {
				t.Errorf("%s %s:\n got %#v\nwant %#v", when, c.id, *got, c.want)
			}
			if pendingHandoff(&got.Lease) != pendingHandoff(&c.read.Lease) {
				t.Errorf("%s: pendingHandoff differs", c.id)
			}
		}
	}
	check("held")
	// Packed in the groups' order (a group without rows among them), the same rows read back.
	var order []string
	for g := range st.units {
		order = append(order, g)
	}
	order = append(order, "\x01no rows")
	slices.Sort(order)
	if err := st.Pack(order); err != nil {
		t.Fatal(err)
	}
	check("packed")
	if len(st.chunks) != 1 || st.rows != nil || len(st.group("\x01no rows")) != 0 {
		t.Fatalf("packed into %d chunks, rows left %v", len(st.chunks), st.rows)
	}
	st.Restart()
	if _, ok := st.byLeaseID("lease-1"); ok {
		t.Fatal("Restart kept a row")
	}
}
