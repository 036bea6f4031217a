package history_test

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"steward/history"
	"steward/history/gather"
)

// TestReadingWritesNothing: gathering the evidence and asking every question of it leaves
// every byte (and mode and mtime) of the lock directory, retired/, the DB with its journal
// and WAL, and the audit log as it was — on steward's DB and on the seed's.
func TestReadingWritesNothing(t *testing.T) {
	for _, seed := range []bool{false, true} {
		f := standard(t, seed)
		before := f.hash()
		for _, it := range []history.Item{{}, hitem(1)} {
			ev := f.read(22*time.Minute, it)
			ev.Timeline(history.Filter{Item: it})
			ev.At(at(4*time.Minute), time.Hour)
			ev.Since(at(4*time.Minute), "maint")
			ev.Heat(at(0), at(22*time.Minute))
		}
		marks := gather.Marks{Dir: filepath.Join(f.dir, "seen"), Forbidden: []string{f.ws.LocksDir, filepath.Dir(f.ws.DBPath)}}
		key := gather.Key("tester", f.sources())
		if err := marks.Save(key, "tester", "ws", at(22*time.Minute)); err != nil {
			t.Fatal(err)
		}
		if after := f.hash(); after != before {
			t.Fatalf("seed=%v: reading changed the sources:\nbefore\n%s\nafter\n%s", seed, before, after)
		}
	}
}

// TestMarks: the last-seen mark round-trips per user and workspace, and is refused inside a
// supervised source's directory.
func TestMarks(t *testing.T) {
	f := newFleet(t, false)
	marks := gather.Marks{Dir: filepath.Join(f.dir, "state", "seen"), Forbidden: []string{f.ws.LocksDir, filepath.Dir(f.ws.DBPath)}}
	k1, k2 := gather.Key("ann", f.sources()), gather.Key("bob", f.sources())
	if k1 == k2 {
		t.Fatal("two users share a mark")
	}
	if _, ok, err := marks.Load(k1); ok || err != nil {
		t.Fatalf("a mark before any was kept: %v %v", ok, err)
	}
	if err := marks.Save(k1, "ann", "ws", at(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if got, ok, err := marks.Load(k1); !ok || err != nil || !got.Equal(at(time.Minute)) {
		t.Fatalf("load %v %v %v", got, ok, err)
	}
	if _, ok, _ := marks.Load(k2); ok {
		t.Fatal("bob sees ann's mark")
	}
	bad := gather.Marks{Dir: filepath.Join(f.ws.LocksDir, "seen"), Forbidden: marks.Forbidden}
	if err := bad.Save(k1, "ann", "ws", at(0)); !errors.Is(err, gather.ErrMarkInSource) {
		t.Fatalf("a mark inside the lock directory: %v", err)
	}
}
