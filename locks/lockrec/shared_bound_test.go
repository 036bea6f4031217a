package lockrec

import (
	"fmt"
	"testing"
	"unsafe"
)

// Files that each list keys of their own share their key lists up to maxKeyLists distinct
// lists, and no further: a record whose list comes past the bound keeps its own copy, while
// the lists already held stay shared (shared.go:49).
//
// Not parallel: it swaps the process-wide table for an empty one and restores it after.
func TestKeyListsSharedUpToTheirBound(t *testing.T) {
	keyLists.Lock()
	saved := keyLists.m
	keyLists.m = nil
	keyLists.Unlock()
	t.Cleanup(func() {
		keyLists.Lock()
		keyLists.m = saved
		keyLists.Unlock()
	})
	file := func(i int) []byte { return fmt.Appendf(nil, `{"issue_number":1,"x_%d":true}`, i) }
	shared := func(i int) bool {
		a, _ := Decode(file(i))
		b, _ := Decode(file(i))
		if len(a.Keys) != 2 || a.Keys[1] != fmt.Sprintf("x_%d", i) || len(b.Keys) != 2 || b.Keys[1] != a.Keys[1] {
			t.Fatalf("file %d: keys %q and %q", i, a.Keys, b.Keys)
		}
		return unsafe.SliceData(a.Keys) == unsafe.SliceData(b.Keys)
	}
	for i := range maxKeyLists + 2 {
		if got, want := shared(i), i < maxKeyLists; got != want {
			t.Errorf("key list %d of %d distinct ones: shared %v, want %v", i+1, maxKeyLists+2, got, want)
		}
	}
	if !shared(0) || !shared(maxKeyLists-1) {
		t.Error("a key list held before the table filled is no longer shared")
	}
}
