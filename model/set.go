package model

import (
	"iter"
	"maps"
	"slices"
)

// setSmall is the most members a set keeps in a slice.
const setSmall = 8

// set is a set of strings. Most of the engine's sets hold one member (a unit's lock file,
// its lease, the units naming a lease, a session's leases, an item's leases), and a map
// of one member costs about 250 bytes — five of them per claim were an eighth of the live
// model's heap at 10,000 claims. A set keeps up to setSmall members in a slice (16 bytes
// each) and moves them to a map beyond, so that a large set (a session holding many
// leases) stays O(1) per change. The zero value is empty and usable. Order is not kept.
type set struct {
	few  []string
	many map[string]struct{}
}

func (s *set) add(v string) {
	switch {
	case s.many != nil:
		s.many[v] = struct{}{}
	case slices.Contains(s.few, v):
	case len(s.few) < setSmall:
		s.few = append(s.few, v)
	default:
		s.many = make(map[string]struct{}, 2*setSmall)
		for _, x := range s.few {
			s.many[x] = struct{}{}
		}
		s.many[v] = struct{}{}
		s.few = nil
	}
}

func (s *set) del(v string) {
	if s.many != nil {
		delete(s.many, v)
		return
	}
	if i := slices.Index(s.few, v); i >= 0 {
		last := len(s.few) - 1
		s.few[i] = s.few[last]
		s.few[last] = ""
		s.few = s.few[:last]
		if last == 0 {
			s.few = nil
		}
	}
}

func (s set) has(v string) bool {
	if s.many != nil {
		_, ok := s.many[v]
		return ok
	}
	return slices.Contains(s.few, v)
}

func (s set) len() int {
	if s.many != nil {
		return len(s.many)
	}
	return len(s.few)
}

// all yields every member once, in no particular order.
func (s set) all() iter.Seq[string] {
	if s.many != nil {
		return maps.Keys(s.many)
	}
	return slices.Values(s.few)
}

// sorted returns the members in order, in a new slice.
func (s set) sorted() []string {
	out := make([]string, 0, s.len())
	out = slices.AppendSeq(out, s.all())
	slices.Sort(out)
	return out
}
