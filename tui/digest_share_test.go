package tui

import (
	"reflect"
	"testing"
	"time"

	"steward/govern/actionid"
	"steward/model"
)

// TestDigestSharesUnchangedRows: the workbench holds its rows by pointer, so a new snapshot's
// digest shares every unchanged row with the digest before it (no copy of every row per
// snapshot), and a row whose actions change — an orphan of its lease appeared — is a new
// row: the previous digest's row, which may be on the screen while the next digest runs on
// the feed's goroutine, is left exactly as it was.
func TestDigestSharesUnchangedRows(t *testing.T) {
	root := newTestRoot(t, 160, 48, false)
	cfg := digestConfig(root.opts)
	s0 := populated()
	d0 := digest(s0, cfg)
	was := map[string]row{}
	for _, r := range d0.Rows[pageClaims] {
		was[r.Key] = *r
	}

	s1 := *s0
	s1.GeneratedAt = s0.GeneratedAt.Add(30 * time.Second)
	s1.Claims = append([]*model.Claim(nil), s0.Claims...)
	c := *s1.Claims[0]
	c.Phase = "reviewing"
	s1.Claims[0] = &c
	target := s1.Claims[1]
	if target.LeaseID == "" {
		t.Fatal("the fixture's second claim names no lease")
	}
	s1.Orphans = append([]*model.Orphan{{Kind: model.OrphanActiveLeasePastExpiry, Item: target.Item,
		LeaseID: target.LeaseID, Action: &model.ActionRef{ID: actionid.ReclaimExpired,
			Target: model.ActionTarget{LeaseID: target.LeaseID}, Allowed: ptr(true)}}}, s0.Orphans...)
	d1 := digest(&s1, cfg)

	byKey := func(rows []*row) map[string]*row {
		m := map[string]*row{}
		for _, r := range rows {
			m[r.Key] = r
		}
		return m
	}
	old, cur := byKey(d0.Rows[pageClaims]), byKey(d1.Rows[pageClaims])
	changed := map[string]bool{}
	for i, cl := range s1.Claims {
		k := ""
		for key, r := range cur {
			if r.LockFile == cl.LockFile && r.LockFile != "" {
				k = key
			}
		}
		if k == "" {
			t.Fatalf("claim %d has no row", i)
		}
		switch i {
		case 0, 1:
			changed[k] = true
			if cur[k] == old[k] {
				t.Errorf("claim %d changed (its phase, its actions) but its row is the previous digest's", i)
			}
		default:
			if cur[k] != old[k] {
				t.Errorf("claim %d did not change but its row was copied", i)
			}
		}
	}
	if len(changed) != 2 || len(cur) < 3 {
		t.Fatalf("the fixture: %d rows, %d changed", len(cur), len(changed))
	}
	for k, r := range old {
		got, want := *r, was[k]
		got.detail, want.detail = nil, nil // a func is never deeply equal to itself
		if !reflect.DeepEqual(got, want) {
			t.Errorf("the previous digest's row %q was written to by the next digest:\n got %+v\nwant %+v", k, got, want)
		}
	}
	for k := range changed {
		if r := cur[k]; r.LockFile == target.LockFile && len(r.Actions) == len(was[k].Actions) {
			t.Errorf("the orphan's action is not on its claim's row: %d actions", len(r.Actions))
		}
	}
}
