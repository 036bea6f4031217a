package locks

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

func waitChange(t *testing.T, ch <-chan Change) Change {
	t.Helper()
	select {
	case c, ok := <-ch:
		if !ok {
			t.Fatal("channel closed")
		}
		return c
	case <-time.After(5 * time.Second):
		t.Fatal("no change within 5s")
	}
	return Change{}
}

func TestWatchRenameStormIsOneChange(t *testing.T) {
	dir := t.TempDir()
	before := runtime.NumGoroutine()
	w, err := Watch(dir, WatchOptions{Debounce: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	// temp file, write, rename over the name: the pattern of every lock write.
	tmp := filepath.Join(dir, ".tmp-a.json-1")
	if err := os.WriteFile(tmp, []byte(`{"remote":`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tmp, []byte(`{"remote":"origin"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, "a.json")); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x"), 0o600)
	c := waitChange(t, w.Changes())
	if len(c.Names) != 1 || c.Names[0] != "a.json" || c.Resync {
		t.Fatalf("change = %+v, want exactly [a.json] (temp and non-json names ignored)", c)
	}
	os.Remove(filepath.Join(dir, "a.json"))
	if c := waitChange(t, w.Changes()); len(c.Names) != 1 || c.Names[0] != "a.json" {
		t.Fatalf("removal change = %+v", c)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, ok := <-w.Changes(); ok {
		t.Fatal("channel still open after Close")
	}
	w.Close() // idempotent
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		runtime.Gosched()
		time.Sleep(time.Millisecond) // polling a counter, not synchronisation on the watcher
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Fatalf("goroutines: %d before, %d after Close", before, n)
	}
}

func TestWatchMissingDir(t *testing.T) {
	if _, err := Watch(filepath.Join(t.TempDir(), "nope"), WatchOptions{}); err == nil {
		t.Fatal("watching a missing directory succeeded")
	}
}
