package tui

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"steward/govern/actionid"
	"steward/model"
)

// sameRows compares two digests' rows of a page: every field that is drawn, searched or
// acted on, and the detail sections built at the snapshot's time.
func sameRows(t *testing.T, what string, got, want []*row, at time.Time) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d rows, want %d", what, len(got), len(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.Key != w.Key || !reflect.DeepEqual(g.Cells, w.Cells) || g.Search != w.Search || !reflect.DeepEqual(g.Actions, w.Actions) ||
			g.Deadline != w.Deadline || g.Heartbeat != w.Heartbeat || g.Inspect != w.Inspect || g.LockFile != w.LockFile {
			t.Fatalf("%s row %d differs:\n got %+v\nwant %+v", what, i, g, w)
		}
		if gs, ws := g.sections(at), w.sections(at); !reflect.DeepEqual(gs, ws) {
			t.Fatalf("%s row %d detail differs:\n got %+v\nwant %+v", what, i, gs, ws)
		}
	}
}

// TestRowCacheMatchesFreshDigest: digesting a sequence of snapshots with the row cache gives
// exactly the rows of a fresh digest of each — a changed claim, orphan or session (a new
// pointer) is re-digested, an orphan that appears gives its claim the action, entries that
// leave are dropped from the cache — and the detail's evidence ages follow the snapshot's time
// even for a row digested snapshots earlier.
func TestRowCacheMatchesFreshDigest(t *testing.T) {
	root := newTestRoot(t, 160, 48, false)
	cfg := digestConfig(root.opts)
	fresh := cfg
	fresh.cache = nil

	s0 := populated()
	s1 := *s0
	s1.GeneratedAt = s0.GeneratedAt.Add(30 * time.Second)
	s1.Claims = append([]*model.Claim(nil), s0.Claims...)
	c := *s1.Claims[1]
	c.Phase = "reviewing"
	s1.Claims[1] = &c
	s1.Orphans = append([]*model.Orphan{{Kind: model.OrphanActiveLeasePastExpiry, Item: item(102), LeaseID: "L-102",
		Action: &model.ActionRef{ID: actionid.ReclaimExpired, Target: model.ActionTarget{LeaseID: "L-102"}, Allowed: ptr(true)}}}, s0.Orphans[1:]...)
	s1.Sessions = s0.Sessions[:2]
	s2 := s1
	s2.GeneratedAt = s1.GeneratedAt.Add(time.Minute)

	for i, s := range []*model.Snapshot{s0, &s1, &s2} {
		got, want := digest(s, cfg), digest(s, fresh)
		for _, id := range []pageID{pageClaims, pageOrphans, pageSessions} {
			sameRows(t, id.title(), got.Rows[id], want.Rows[id], s.GeneratedAt)
		}
		if n := len(cfg.cache.claims) + len(cfg.cache.orphans) + len(cfg.cache.sessions); n != len(s.Claims)+len(s.Orphans)+len(s.Sessions) {
			t.Fatalf("snapshot %d: the cache holds %d rows, the snapshot %d entries", i, n, len(s.Claims)+len(s.Orphans)+len(s.Sessions))
		}
	}
	got := digest(&s2, cfg)
	var changed *row
	for _, r := range got.Rows[pageClaims] {
		if r.Item == "acme/widgets#102" {
			changed = r
		}
	}
	if changed.Cells[4] != "reviewing" || len(changed.Actions) != 1 || changed.Recover == nil {
		t.Fatalf("the changed claim: %v, %d actions, recover %v", changed.Cells, len(changed.Actions), changed.Recover)
	}
	var first *row
	for _, r := range got.Rows[pageClaims] {
		if r.Item == "acme/widgets#101" {
			first = r
		}
	}
	ev := strings.Join(first.sections(s2.GeneratedAt)[0].Lines, " ")
	if !strings.Contains(ev, "(seen 1m38s before the snapshot)") {
		t.Fatalf("an unchanged claim's evidence is not aged against the new snapshot: %q", ev)
	}
}
