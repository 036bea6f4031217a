package model

import "testing"

// TestSortedBulkReplaceKeepsOneEntryPerKey: a unit re-derived during a bulk flush keeps its
// keys; the list must hold its new entries once, not the old and the new side by side
// (found by the reliability load run: the long-running model showed every claim, orphan and
// session re-derived in a big flush twice — the stale copy with the old owner liveness).
func TestSortedBulkReplaceKeepsOneEntryPerKey(t *testing.T) {
	var s sorted[string]
	a, b, c := "a-old", "b", "a-new"
	keys := s.replace(nil, "unit-a", []*string{&a})
	s.replace(nil, "unit-b", []*string{&b})
	s.begin()
	keys = s.replace(keys, "unit-a", []*string{&c})
	s.end()
	got := s.snapshot()
	if len(got) != 2 || *got[0] != "a-new" || *got[1] != "b" {
		var vs []string
		for _, v := range got {
			vs = append(vs, *v)
		}
		t.Fatalf("after a bulk re-derive: %q, want [a-new b]", vs)
	}
	s.begin()
	s.replace(keys, "unit-a", nil)
	s.end()
	if got := s.snapshot(); len(got) != 1 || *got[0] != "b" {
		t.Fatalf("after a bulk removal: %d entries", len(got))
	}
}
