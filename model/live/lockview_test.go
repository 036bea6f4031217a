package live_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"steward/locks"
	"steward/locks/lockrec"
	"steward/model"
	"steward/model/live"
)

// TestLockViewFollowsTheDirectory: the view of the lock directory the live model keeps
// (what the previews of a live feed look items up in, instead of stat'ing every lock file
// per snapshot) answers each item's lookup as a fresh refresh of the directory does —
// after the first read, and after a lock is renamed to a foreign name, one removed, one
// torn under its item's name and one added, each seen through the watcher's events.
func TestLockViewFollowsTheDirectory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ws := live.Workspace{LocksDir: filepath.Join(dir, "locks"), DBPath: filepath.Join(dir, "cp.sqlite3"),
		RepoRoot: filepath.Join(dir, "repo")}
	if err := os.MkdirAll(ws.LocksDir, 0o700); err != nil {
		t.Fatal(err)
	}
	names := map[int64]string{}
	for n := int64(1); n <= 3; n++ {
		names[n] = writeLock(t, ws.LocksDir, n, benchNow.Add(time.Hour))
	}
	m := live.New(ws, live.Options{Now: func() time.Time { return benchNow }, Resync: time.Hour, ProbeEvery: time.Hour})
	if err := m.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	item := func(n int64) lockrec.Key {
		return lockrec.Key{Remote: "origin", Org: "acme", Repo: "widgets", Issue: n}
	}
	files := func(es []lockrec.Entry) []string {
		var out []string
		for _, e := range es {
			out = append(out, e.Name)
		}
		return out
	}
	// agree reports whether the model's view finds, for items 1 to 5, what a refresh finds.
	agree := func() bool {
		v, err := locks.NewIndex(ws.LocksDir).View()
		if err != nil {
			t.Fatal(err)
		}
		for n := int64(1); n <= 5; n++ {
			if !slices.Equal(files(m.LockView().Lookup(item(n))), files(v.Lookup(item(n)))) {
				return false
			}
		}
		return true
	}
	claimed := func(s *model.Snapshot, n int64) bool {
		for _, c := range s.Claims {
			if c.Item != nil && c.Item.Number == n {
				return true
			}
		}
		return false
	}
	waitFor(t, m, "the first read", func(s *model.Snapshot) bool { return len(s.Claims) == 3 })
	if !agree() {
		t.Fatal("after the first read the view differs from a refresh")
	}
	if got := files(m.LockView().Lookup(item(2))); !slices.Equal(got, []string{names[2]}) {
		t.Fatalf("item 2: %v, want %v", got, names[2])
	}

	if err := os.Rename(filepath.Join(ws.LocksDir, names[2]), filepath.Join(ws.LocksDir, "worker-2.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(ws.LocksDir, names[3])); err != nil {
		t.Fatal(err)
	}
	torn, _ := locks.Name(item(4))
	if err := os.WriteFile(filepath.Join(ws.LocksDir, torn), []byte(`{"remote":`), 0o600); err != nil {
		t.Fatal(err)
	}
	writeLock(t, ws.LocksDir, 5, benchNow.Add(time.Hour))
	waitFor(t, m, "the changes", func(s *model.Snapshot) bool {
		return !claimed(s, 3) && claimed(s, 5) && agree()
	})
	for n, want := range map[int64][]string{2: {"worker-2.json"}, 3: nil, 4: {torn}} {
		if got := files(m.LockView().Lookup(item(n))); !slices.Equal(got, want) {
			t.Errorf("item %d: %v, want %v", n, got, want)
		}
	}
}
