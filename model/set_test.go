package model

import (
	"fmt"
	"slices"
	"testing"
)

// TestSet: a set behaves as a map of members through every size — adding twice, deleting
// what is not there, growing past setSmall into a map and shrinking back to empty — with
// each member yielded once and sorted in order.
func TestSet(t *testing.T) {
	for _, n := range []int{0, 1, 2, setSmall, setSmall + 1, 3 * setSmall} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			var s set
			want := map[string]bool{}
			check := func(when string) {
				t.Helper()
				if s.len() != len(want) {
					t.Fatalf("%s: len %d, want %d", when, s.len(), len(want))
				}
				var got []string
				for v := range s.all() {
					got = append(got, v)
					if !want[v] {
						t.Fatalf("%s: yields %q, not a member", when, v)
					}
				}
				if len(got) != len(want) {
					t.Fatalf("%s: yields %d members, want %d", when, len(got), len(want))
				}
				if srt := s.sorted(); !slices.IsSorted(srt) || len(srt) != len(want) {
					t.Fatalf("%s: sorted %q", when, srt)
				}
				for v := range want {
					if !s.has(v) {
						t.Fatalf("%s: has(%q) false", when, v)
					}
				}
				if s.has("absent") {
					t.Fatalf("%s: has an absent member", when)
				}
			}
			for i := range n {
				v := fmt.Sprintf("m%02d", i)
				s.add(v)
				s.add(v) // twice is once
				want[v] = true
				check(fmt.Sprintf("after adding %s", v))
			}
			s.del("absent")
			check("after deleting an absent member")
			for i := n - 1; i >= 0; i -= 2 {
				v := fmt.Sprintf("m%02d", i)
				s.del(v)
				delete(want, v)
				check(fmt.Sprintf("after deleting %s", v))
			}
			for v := range want {
				s.del(v)
				delete(want, v)
			}
			check("emptied")
		})
	}
}

// TestAddToDelFrom: a set held as a map's value is dropped from the map with its last member.
func TestAddToDelFrom(t *testing.T) {
	m := map[int64]set{}
	addTo(m, 7, "a")
	addTo(m, 7, "b")
	delFrom(m, 7, "a")
	if s, ok := m[7]; !ok || s.len() != 1 || !s.has("b") {
		t.Fatalf("after one of two deleted: %+v", m)
	}
	delFrom(m, 7, "b")
	delFrom(m, 8, "x") // a key not held
	if len(m) != 0 {
		t.Fatalf("an empty set is kept: %+v", m)
	}
}
