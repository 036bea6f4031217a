package model

import (
	"fmt"
	"testing"
)

// TestSortedKeepsAUnitsEntriesInOrder: a unit's entries are listed in the order derived,
// one each, past ten, a hundred and a thousand of them, whether inserted one by one or in
// a bulk flush; in bulk, the entries of a unit not re-derived stay (the first key held
// among them).
func TestSortedKeepsAUnitsEntriesInOrder(t *testing.T) {
	vals := func(unit string, n int) []*string {
		out := make([]*string, n)
		for j := range out {
			v := fmt.Sprintf("%s/%d", unit, j)
			out[j] = &v
		}
		return out
	}
	check := func(t *testing.T, s *sorted[string], want ...[]*string) {
		t.Helper()
		got := s.snapshot()
		i := 0
		for _, w := range want {
			for _, v := range w {
				if i >= len(got) || *got[i] != *v {
					t.Fatalf("entry %d of %d: %v, want %s", i, len(got), at(got, i), *v)
				}
				i++
			}
		}
		if i != len(got) {
			t.Fatalf("%d entries, want %d", len(got), i)
		}
	}
	for _, bulk := range []bool{false, true} {
		t.Run(fmt.Sprint("bulk=", bulk), func(t *testing.T) {
			var s sorted[string]
			a, b := vals("a", 1001), vals("b", 3)
			if bulk {
				s.begin()
			}
			s.replace(nil, "unit-a", a)
			keysB := s.replace(nil, "unit-b", b)
			s.end()
			check(t, &s, a, b)
			// unit-b re-derived alone: unit-a's entries, held before it, stay.
			if bulk {
				s.begin()
			}
			b2 := vals("b2", 2)
			s.replace(keysB, "unit-b", b2)
			s.end()
			check(t, &s, a, b2)
		})
	}
}

func at(vs []*string, i int) string {
	if i < len(vs) {
		return *vs[i]
	}
	return "none"
}
