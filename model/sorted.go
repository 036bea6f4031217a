package model

import (
	"slices"
	"sort"
)

// sorted is a list kept in key order, updated per unit: replacing one unit's
// entries costs a binary search and a memmove, and publishing is one copy.
type sorted[T any] struct {
	keys []string
	vals []*T
	// bulk mode (a flush of many units): removals are collected and new
	// entries appended, then one sort restores the order.
	bulk    bool
	removed map[string]bool
}

// begin enters bulk mode; end leaves it and sorts once: O(n log n) for a
// cold build instead of O(n²) inserts.
func (s *sorted[T]) begin() { s.bulk, s.removed = true, map[string]bool{} }

func (s *sorted[T]) end() {
	if !s.bulk {
		return
	}
	s.bulk = false
	type kv struct {
		k string
		v *T
	}
	// A unit re-derived in bulk mode replaces its entries under the same keys: the new entry
	// is appended while the old one is still in place, so the last entry of a key wins (a
	// forward pass kept both: every re-derived claim, orphan and session was shown twice).
	all := make([]kv, 0, len(s.keys))
	seen := make(map[string]bool, len(s.keys))
	for i := len(s.keys) - 1; i >= 0; i-- {
		k := s.keys[i]
		if !s.removed[k] && !seen[k] {
			seen[k] = true
			all = append(all, kv{k, s.vals[i]})
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].k < all[j].k })
	s.keys, s.vals = make([]string, len(all)), make([]*T, len(all))
	for i, x := range all {
		s.keys[i], s.vals[i] = x.k, x.v
	}
	s.removed = nil
}

func (s *sorted[T]) remove(keys []string) {
	if s.bulk {
		for _, k := range keys {
			s.removed[k] = true
		}
		return
	}
	for _, k := range keys {
		if i, ok := slices.BinarySearch(s.keys, k); ok {
			s.keys = slices.Delete(s.keys, i, i+1)
			s.vals = slices.Delete(s.vals, i, i+1)
		}
	}
}

// replace drops the entries with keys old and inserts vals under prefix,
// returning the new keys.
func (s *sorted[T]) replace(old []string, prefix string, vals []*T) []string {
	s.remove(old)
	if len(vals) == 0 {
		return nil
	}
	keys := make([]string, len(vals))
	for j, v := range vals {
		k := prefix + "\x00" + string(rune('0'+j/1000)) + itoa3(j)
		keys[j] = k
		if s.bulk {
			delete(s.removed, k)
			s.keys, s.vals = append(s.keys, k), append(s.vals, v)
			continue
		}
		i, _ := slices.BinarySearch(s.keys, k)
		s.keys = slices.Insert(s.keys, i, k)
		s.vals = slices.Insert(s.vals, i, v)
	}
	return keys
}

func itoa3(j int) string {
	j %= 1000
	return string([]byte{byte('0' + j/100), byte('0' + j/10%10), byte('0' + j%10)})
}

func (s *sorted[T]) snapshot() []*T { return slices.Clone(s.vals) }

func (s *sorted[T]) len() int { return len(s.keys) }
