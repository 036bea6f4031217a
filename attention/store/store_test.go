package store

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"steward/attention"
	"steward/model"
)

func state(keys ...string) attention.State {
	var st attention.State
	for i, k := range keys {
		st.Entries = append(st.Entries, attention.Remembered{
			Entry: attention.Entry{Key: k, Kind: attention.KindCollision, Need: model.NeedHuman, Since: time.Date(2026, 7, 23, 10, i, 0, 0, time.UTC), SinceFrom: attention.SinceFirstSeen, Evidence: "e-" + k},
			SLA:   15 * time.Minute, Sources: []model.Source{model.SourceLocks}, Announced: i})
	}
	return st
}

// TestSaveLoad: a state round-trips; the file is 0600; a missing file is an empty state; a
// save leaves no temp file beside it.
func TestSaveLoad(t *testing.T) {
	dir := t.TempDir()
	path := Path(filepath.Join(dir, "sub", "audit.jsonl"), Surface(SurfaceWatch, "fleet/a b"))
	if !strings.HasSuffix(path, "audit.jsonl.attention-state-watch.fleet_a_b.json") {
		t.Fatalf("path %s", path)
	}
	if st, err := Load(path); err != nil || len(st.Entries) != 0 {
		t.Fatalf("missing file: %+v %v; want an empty state", st, err)
	}
	want := state("collision:a", "source:db")
	if err := save(path, want); err != nil {
		t.Fatal(err)
	}
	got, err := Load(path)
	if err != nil || len(got.Entries) != 2 || got.Entries[1].Entry.Key != "source:db" || got.Entries[1].Announced != 1 ||
		!got.Entries[0].Entry.Since.Equal(want.Entries[0].Entry.Since) || got.Entries[0].SLA != 15*time.Minute || len(got.Entries[0].Sources) != 1 {
		t.Fatalf("round trip: %+v %v", got, err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v %v; want 0600", fi.Mode(), err)
	}
	ents, _ := os.ReadDir(filepath.Dir(path))
	if len(ents) != 1 {
		t.Fatalf("files beside the state: %v", ents)
	}
}

// TestLoadRefusesWhatItCannotRead: an undecodable, trailing, other-version or oversized
// file is an error naming the file — never an empty state that would notify everything
// again silently — and SetAside keeps it for a person to look at.
func TestLoadRefusesWhatItCannotRead(t *testing.T) {
	for name, body := range map[string]string{
		"torn":          `{"v":1,"entries":[{"entry":{"key":"a"`,
		"trailing":      `{"v":1,"entries":[]} {}`,
		"other version": `{"v":2,"entries":[]}`,
		"not json":      "garbage",
		"oversized":     `{"v":1,"entries":[],"pad":"` + strings.Repeat("x", maxSize) + `"}`,
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.json")
			if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
			if _, err := Load(path); err == nil || !strings.Contains(err.Error(), path) {
				t.Fatalf("Load: %v; want an error naming the file", err)
			}
			bad, err := SetAside(path)
			if err != nil {
				t.Fatal(err)
			}
			if b, _ := os.ReadFile(bad); string(b) != body {
				t.Fatal("the unreadable file was not kept as it was")
			}
			if st, err := Load(path); err != nil || len(st.Entries) != 0 {
				t.Fatalf("after SetAside: %+v %v", st, err)
			}
		})
	}
}

// TestSaveIsCrashSafe: a save that dies after its temp file was written (a stray temp file
// left beside the state) leaves the state as it was, and the next save still replaces it
// whole.
func TestSaveIsCrashSafe(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.json")
	if err := save(path, state("collision:a")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(filepath.Dir(path), ".s.json.tmp-123"), []byte(`{"v":1,"entries":[{"ent`), 0o600); err != nil {
		t.Fatal(err)
	}
	if st, err := Load(path); err != nil || len(st.Entries) != 1 {
		t.Fatalf("after a dead save: %+v %v", st, err)
	}
	if err := save(path, state("collision:a", "collision:b")); err != nil {
		t.Fatal(err)
	}
	if st, err := Load(path); err != nil || len(st.Entries) != 2 {
		t.Fatalf("%+v %v", st, err)
	}
}

// TestSaverKeepsTheNewest: saves of one tracker run concurrently and out of order (the
// workbench runs each in a command of its own); an older revision never lands over a newer.
func TestSaverKeepsTheNewest(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.json")
	s := NewSaver(path)
	if err := s.Save(5, state("a", "b", "c", "d", "e")); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for rev := 1; rev < 5; rev++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			keys := make([]string, rev)
			for i := range keys {
				keys[i] = "k"
			}
			if err := s.Save(uint64(rev), state(keys...)); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if st, err := Load(path); err != nil || len(st.Entries) != 5 {
		t.Fatalf("%d entries, %v; want revision 5's five", len(st.Entries), err)
	}
}
