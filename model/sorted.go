package model

import (
	"slices"
	"strings"
)

// sorted is a list kept in key order, updated per unit: replacing one unit's
// entries costs a binary search and a memmove, and publishing is one copy.
type sorted[T any] struct {
	keys []string
	vals []*T
}

func (s *sorted[T]) remove(keys []string) {
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

var _ = strings.Compare
