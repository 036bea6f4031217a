package leases_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"steward/leases"
	"steward/leases/leasestest"
	"steward/watchdir"
	wt "steward/watchdir/watchdirtest"
)

func TestWatchDBSeesCommitAndDataVersionMoves(t *testing.T) {
	before := runtime.NumGoroutine()
	path := leasestest.NewDB(t, nil, nil)
	r, err := leases.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx := context.Background()
	v0, err := r.DataVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	w, err := leases.WatchDB(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	leasestest.Insert(t, path, []leasestest.Session{{SessionID: "s1"}}, nil)
	select {
	case _, ok := <-w.Changes():
		if !ok {
			t.Fatal("closed")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no change reported for a commit")
	}
	v1, err := r.DataVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if v1 == v0 {
		t.Fatalf("data_version did not move after a commit (%d)", v0)
	}
	w.Close()
	if _, ok := <-w.Changes(); ok {
		t.Fatal("channel open after Close")
	}
	r.Close()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before+2 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before+2 {
		t.Fatalf("goroutines: %d before, %d after Close", before, n)
	}
	_ = filepath.Base(path)
}

// TestWatchDBOnlyItsFiles: a file beside the DB that is not the DB, its -wal or its
// -journal is no change.
func TestWatchDBOnlyItsFiles(t *testing.T) {
	path := leasestest.NewDB(t, nil, nil)
	w, err := leases.WatchDB(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := os.WriteFile(filepath.Join(filepath.Dir(path), "other.txt"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path+"-journal", nil, 0o600); err != nil {
		t.Fatal(err)
	}
	wt.WaitFor(t, w.Changes(), "the -journal", func(c watchdir.Change) bool {
		for _, n := range c.Names {
			if n == "other.txt" {
				t.Fatalf("change names %v", c.Names)
			}
		}
		return len(c.Names) > 0
	})
}

// TestWatchDBReattachesAfterTheDirectoryIsReplaced: the DB's directory is removed and
// made again with a new DB. The DB watcher used to keep its dead watch and report nothing
// (the lock watcher re-attached); now it resyncs at once, says so, and sees the new DB.
func TestWatchDBReattachesAfterTheDirectoryIsReplaced(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cp")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "cp.sqlite3")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	w, err := leases.WatchDBWith(path, leases.DBWatchOptions{Poll: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	wt.WaitFor(t, w.Changes(), "a change when the directory went", wt.Any)
	if m := w.Mode(); !strings.Contains(m, "removed or moved") {
		t.Fatalf("mode %q does not say the DB's directory went away", m)
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	wt.WaitMode(t, w, "empty: re-attached", func(m string) bool { return m == "" })
	if err := os.WriteFile(path, []byte("new"), 0o600); err != nil {
		t.Fatal(err)
	}
	wt.WaitFor(t, w.Changes(), "the new DB file", wt.Names("cp.sqlite3"))
}

// TestWatchDBReportsAModeChange: a chmod of the DB is a change (the lock watcher's rule:
// a file made unreadable must be looked at). The DB watcher dropped it; for the DB it
// costs one PRAGMA data_version.
func TestWatchDBReportsAModeChange(t *testing.T) {
	path := leasestest.NewDB(t, nil, nil)
	w, err := leases.WatchDB(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := os.Chmod(path, 0o400); err != nil {
		t.Fatal(err)
	}
	wt.WaitFor(t, w.Changes(), "a change for the chmod", wt.Any)
}

// TestWatchDBSurvivesTheKernelWatchEnding: the DB watcher's kernel watch ends under it; it
// used to close its channel (the live model then went without a DB watcher until the DB
// was reopened). Now it resyncs and watches again.
func TestWatchDBSurvivesTheKernelWatchEnding(t *testing.T) {
	path := leasestest.NewDB(t, nil, nil)
	k := wt.NewKernel()
	w, err := leases.WatchDBWith(path, leases.DBWatchOptions{Poll: 20 * time.Millisecond, Notify: k.Notify})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	k.Next(t).Close()
	wt.WaitFor(t, w.Changes(), "a resync when the watch ended", wt.Resync)
	k.Next(t)
	leasestest.Insert(t, path, []leasestest.Session{{SessionID: "s1"}}, nil)
	wt.WaitFor(t, w.Changes(), "a change for a commit on the new watch", wt.Named)
}
