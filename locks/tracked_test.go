package locks

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"steward/locks/lockrec"
)

// TestTrackedIsView: a view kept current by Set from the reads of each change answers
// every lookup as a refresh of the index does — after the first read of the directory,
// after a file is rewritten to name another item, torn, renamed, removed, and after a
// record under a foreign name appears — and nothing of hidden files, pointers or archives.
func TestTrackedIsView(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rec := decodeFixture(t, "canonical.json")
	key, _ := rec.Key()
	item := func(n int64) lockrec.Key {
		return lockrec.Key{Remote: key.Remote, Org: key.Org, Repo: key.Repo, Issue: n}
	}
	at := func(n int64, org string) lockrec.Record {
		r := rec
		r.IssueNumber, r.Org = &n, org
		return r
	}
	name := func(k lockrec.Key) string { s, _ := Name(k); return s }
	tr := NewTracked(dir)
	// set reads each named file as the live model does and sets what it found.
	set := func(names ...string) {
		t.Helper()
		for _, n := range names {
			e := ReadFile(dir, n)
			tr.Set(n, &e)
		}
	}
	names := func(es []lockrec.Entry) []string {
		var out []string
		for _, e := range es {
			out = append(out, e.Name)
		}
		return out
	}
	check := func(step string, want map[int64]int) {
		t.Helper()
		v, err := NewIndex(dir).View()
		if err != nil {
			t.Fatal(err)
		}
		for n := int64(1); n <= 6; n++ {
			g, w := names(tr.Lookup(item(n))), names(v.Lookup(item(n)))
			if !equal(g, w) {
				t.Errorf("%s: item %d: the tracked view finds %v, a refresh %v", step, n, g, w)
			}
			if c, ok := want[n]; ok && len(g) != c {
				t.Errorf("%s: item %d: %v, want %d files", step, n, g, c)
			}
		}
	}
	write := func(n string, b []byte) { t.Helper(); writeFile(t, filepath.Join(dir, n), b) }

	write(name(item(1)), mustMarshal(t, at(1, key.Org)))
	write("worker-own-name.json", mustMarshal(t, at(1, upper(key.Org))))
	write(name(item(2)), []byte(`{"remote":`))
	write(name(item(3)), []byte(`{"note":"no item named"}`))
	write("elsewhere.json", mustMarshal(t, at(4, key.Org)))
	write(".hidden.json", mustMarshal(t, at(1, key.Org)))
	write("session-4242.json", mustMarshal(t, at(1, key.Org)))
	set(name(item(1)), "worker-own-name.json", name(item(2)), name(item(3)), "elsewhere.json", ".hidden.json",
		"session-4242.json")
	check("first read", map[int64]int{1: 2, 2: 1, 3: 1, 4: 1, 5: 0})
	if got := tr.Len(); got != 5 {
		t.Errorf("tracked %d files, want the 5 live lock files", got)
	}

	// Rewritten to name item 5: filed again, under 5 only.
	write("worker-own-name.json", mustMarshal(t, at(5, key.Org)))
	set("worker-own-name.json")
	check("rewritten", map[int64]int{1: 1, 5: 1})
	// Torn in place: its record can no longer say, and its name is no item's convention.
	write("elsewhere.json", []byte(`{"remote":`))
	set("elsewhere.json")
	check("torn", map[int64]int{4: 0})
	// The unreadable file of item 2 mended to name item 6 under item 2's name.
	write(name(item(2)), mustMarshal(t, at(6, key.Org)))
	set(name(item(2)))
	check("mended", map[int64]int{2: 0, 6: 1})
	// Renamed: the old name read as missing, the new one read.
	if err := os.Rename(filepath.Join(dir, name(item(1))), filepath.Join(dir, "moved.json")); err != nil {
		t.Fatal(err)
	}
	set(name(item(1)), "moved.json")
	check("renamed", map[int64]int{1: 1})
	// Removed, and dropped by a nil read.
	if err := os.Remove(filepath.Join(dir, "moved.json")); err != nil {
		t.Fatal(err)
	}
	tr.Set("moved.json", nil)
	check("removed", map[int64]int{1: 0})
	// Left: the files naming items 5 and 6, and item 3's conventional name (its record
	// names no item); the torn elsewhere.json can name no item at all.
	if got := tr.Len(); got != 3 {
		t.Errorf("tracked %d files after the removal, want 3", got)
	}
}

// TestTrackedSetAndLookupAtOnce: the live model sets while the annotator looks up, on
// two goroutines (run with -race).
func TestTrackedSetAndLookupAtOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rec := decodeFixture(t, "canonical.json")
	key, _ := rec.Key()
	n := "worker-own-name.json"
	writeFile(t, filepath.Join(dir, n), mustMarshal(t, rec))
	e := ReadFile(dir, n)
	tr := NewTracked(dir)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for range 200 {
			tr.Set(n, &e)
			tr.Set(n, nil)
		}
		tr.Set(n, &e)
	}()
	go func() {
		defer wg.Done()
		for range 200 {
			if got := tr.Lookup(key); len(got) > 1 {
				t.Errorf("lookup found %d files, want at most 1", len(got))
				return
			}
		}
	}()
	wg.Wait()
	if got := tr.Lookup(key); len(got) != 1 {
		t.Errorf("after the last set: %d files, want 1", len(got))
	}
}
