package locks

import (
	"strings"
	"sync"

	"steward/locks/lockrec"
)

// Tracked is a view of a lock directory that its owner keeps current from the reads it
// makes anyway — the live model sets each file it reads and drops each file it finds
// gone — instead of listing and stat'ing the whole directory for each use. Its lookups
// read only the named item's files, fresh, as IndexView's do. It serves the previews of a
// live feed (the orphans' annotations): a View per snapshot lstat'ed every lock file, most
// of the cost of a DB commit reaching the screen at 10,000 claims. Like any view it is
// advice; a writer's check looks up on the Index. It is safe for concurrent use.
type Tracked struct {
	mu    sync.RWMutex
	v     *IndexView
	filed map[string]filing // name → where it is filed
}

// filing is where Tracked filed a name: under the identity its record names, or, when
// the record cannot say, the one its name gives (named).
type filing struct {
	id    lockrec.Key
	named bool
}

// NewTracked returns an empty tracked view of the lock directory dir.
func NewTracked(dir string) *Tracked {
	return &Tracked{v: NewView(dir), filed: map[string]filing{}}
}

// Set records what a read of lock file name found; nil, or an entry that is not a live
// lock file (missing, archived, a dot or temp name), drops the name.
func (t *Tracked) Set(name string, e *lockrec.Entry) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.drop(name)
	if e == nil || e.Class != lockrec.ClassLive || e.Missing || strings.HasPrefix(name, ".") ||
		strings.ContainsAny(name, `/\`) {
		return
	}
	if e.Unreadable == nil && e.HasKey {
		id := e.Key.Identity()
		t.v.byKey[id] = append(t.v.byKey[id], name)
		t.filed[name] = filing{id: id}
		return
	}
	if pk, ok := parseName(name); ok {
		id := pk.Identity()
		t.v.byName[id] = append(t.v.byName[id], name)
		t.filed[name] = filing{id: id, named: true}
	}
}

// drop removes name from where it is filed.
func (t *Tracked) drop(name string) {
	f, ok := t.filed[name]
	if !ok {
		return
	}
	m := t.v.byKey
	if f.named {
		m = t.v.byName
	}
	names := m[f.id]
	for i, n := range names {
		if n == name {
			names = append(names[:i:i], names[i+1:]...)
			break
		}
	}
	if len(names) == 0 {
		delete(m, f.id)
	} else {
		m[f.id] = names
	}
	delete(t.filed, name)
}

// Lookup is Index.Lookup over the names tracked: the files that named item k when last
// read (or whose name does, when their record could not say), read fresh.
func (t *Tracked) Lookup(k lockrec.Key) []lockrec.Entry {
	want := k.Identity()
	t.mu.RLock()
	cand := append(append([]string(nil), t.v.byKey[want]...), t.v.byName[want]...)
	t.mu.RUnlock()
	return t.v.x.read(want, cand)
}

// Len is the number of live lock files tracked.
func (t *Tracked) Len() int {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return len(t.filed)
}
