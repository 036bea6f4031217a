package lockrec

import (
	"strings"
	"sync"
	"unique"
)

// A fleet's lock files are written by a few tools, so thousands of records list the same
// keys in the same order and repeat the same remote, org, repo, claimant and provenance
// values. A process that holds every record (the live model, status) keeps one copy of each.

// sharedValue returns the one copy of a value that repeats across records.
func sharedValue(s string) string {
	if s == "" {
		return s
	}
	return unique.Make(s).Value()
}

// maxKeyLists bounds the key lists kept: a directory of hostile files, each with keys of
// its own, must not grow the table without end (a list past the bound is the record's own).
const maxKeyLists = 256

var keyLists struct {
	sync.RWMutex
	m map[string][]string
}

// sharedKeys returns the one copy of a record's (or block's) key list. Its capacity is its
// length, so an append by a caller copies rather than writing into the shared array.
func sharedKeys(keys []string) []string {
	if len(keys) == 0 {
		return keys
	}
	id := strings.Join(keys, "\x00")
	keyLists.RLock()
	got, ok := keyLists.m[id]
	keyLists.RUnlock()
	if ok {
		return got
	}
	keyLists.Lock()
	defer keyLists.Unlock()
	if got, ok := keyLists.m[id]; ok {
		return got
	}
	own := keys[:len(keys):len(keys)]
	if len(keyLists.m) >= maxKeyLists {
		return own
	}
	if keyLists.m == nil {
		keyLists.m = map[string][]string{}
	}
	keyLists.m[id] = own
	return own
}
