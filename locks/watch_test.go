package locks

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	wt "steward/watchdir/watchdirtest"
)

// TestWatchNamesLockFilesOnly: a lock write (temp file, write, rename over the name) is
// one change naming the lock; temp names and names without ".json" never appear.
func TestWatchNamesLockFilesOnly(t *testing.T) {
	dir := t.TempDir()
	w, err := Watch(dir, WatchOptions{Debounce: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	tmp := filepath.Join(dir, ".tmp-a.json-1")
	writeFile(t, tmp, []byte(`{"remote":`))
	writeFile(t, tmp, []byte(`{"remote":"origin"}`))
	if err := os.Rename(tmp, filepath.Join(dir, "a.json")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "notes.txt"), []byte("x"))
	if c := wt.WaitFor(t, w.Changes(), "a change", wt.Any); !wt.Names("a.json")(c) || c.Resync {
		t.Fatalf("change = %+v, want exactly [a.json]", c)
	}
}

func TestWatchMissingDir(t *testing.T) {
	_, err := Watch(filepath.Join(t.TempDir(), "nope"), WatchOptions{})
	var pe *PathError
	if !errors.As(err, &pe) || pe.Op != "watch" || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("watching a missing directory: %v, want a *PathError wrapping not-exist", err)
	}
}

// TestWatchPollSeesWritesThroughALink: at the inotify limit the lock watcher polls; a lock
// name that is a link inside the directory reads its target (ReadFile follows it), so a
// write to the target is a change. The lock watcher's own poll used lstat and missed it
// (the DB watcher's used stat).
func TestWatchPollSeesWritesThroughALink(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "target.txt"), []byte(`{}`))
	if err := os.Symlink("target.txt", filepath.Join(dir, "a.json")); err != nil {
		t.Fatal(err)
	}
	w, err := Watch(dir, WatchOptions{Poll: 20 * time.Millisecond, Notify: wt.Limit(syscall.ENOSPC)})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	writeFile(t, filepath.Join(dir, "target.txt"), []byte(`{"remote":"origin"}`))
	wt.WaitFor(t, w.Changes(), "a resync after a write through the link", wt.Resync)
}

// TestWatchSurvivesTheKernelWatchEnding: the lock watcher's kernel watch ends under it;
// it used to go silent for good (no event, no poll, channel open). Now it resyncs and
// watches again.
func TestWatchSurvivesTheKernelWatchEnding(t *testing.T) {
	dir := t.TempDir()
	k := wt.NewKernel()
	w, err := Watch(dir, WatchOptions{Poll: 20 * time.Millisecond, Notify: k.Notify})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	k.Next(t).Close()
	wt.WaitFor(t, w.Changes(), "a resync when the watch ended", wt.Resync)
	k.Next(t)
	writeFile(t, filepath.Join(dir, "b.json"), []byte(`{}`))
	wt.WaitFor(t, w.Changes(), "b.json", wt.Names("b.json"))
}
