package attention

import (
	"strings"
	"testing"

	"steward/model"
)

// TestOrphanKeys: an orphan's attention key names its kind and what it is about, and never
// ends in an empty field — an orphan of a lease alone read "orphan:<kind>:<lease>:" before.
// Keys of the three shapes stay distinct.
func TestOrphanKeys(t *testing.T) {
	act := &model.ActionRef{ID: "lease.reclaim-expired"}
	s := &model.Snapshot{Orphans: []*model.Orphan{
		{Kind: model.OrphanActiveLeasePastExpiry, LeaseID: "L1", Action: act},
		{Kind: model.OrphanStaleLockDeadOwner, LockFile: "a.json", Action: act},
		{Kind: model.OrphanStaleLockDeadOwner, LeaseID: "L1", LockFile: "a.json", Action: act},
	}}
	es, _ := FromSnapshot(s, SLAs{})
	want := []string{
		"orphan:active-lease-past-expiry:L1",
		"orphan:stale-lock-dead-owner::a.json",
		"orphan:stale-lock-dead-owner:L1:a.json",
	}
	if len(es) != len(want) {
		t.Fatalf("%d entries, want %d: %+v", len(es), len(want), es)
	}
	seen := map[string]bool{}
	for i, e := range es {
		if e.Key != want[i] {
			t.Errorf("entry %d: key %q, want %q", i, e.Key, want[i])
		}
		if strings.HasSuffix(e.Key, ":") {
			t.Errorf("key %q ends in an empty field", e.Key)
		}
		if seen[e.Key] {
			t.Errorf("key %q twice", e.Key)
		}
		seen[e.Key] = true
	}
}
