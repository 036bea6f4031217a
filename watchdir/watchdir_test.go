package watchdir_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"

	"steward/watchdir"
	wt "steward/watchdir/watchdirtest"
)

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

func jsonOnly(n string) bool { return !strings.HasPrefix(n, ".") && strings.HasSuffix(n, ".json") }

func TestBurstIsOneChange(t *testing.T) {
	dir := t.TempDir()
	before := runtime.NumGoroutine()
	w, err := watchdir.Watch(dir, watchdir.Options{Debounce: 50 * time.Millisecond, Relevant: jsonOnly})
	if err != nil {
		t.Fatal(err)
	}
	// temp file, write, rename over the name: the pattern of every lock write.
	tmp := filepath.Join(dir, ".tmp-a.json-1")
	writeFile(t, tmp, `{"remote":`)
	writeFile(t, tmp, `{"remote":"origin"}`)
	if err := os.Rename(tmp, filepath.Join(dir, "a.json")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "notes.txt"), "x")
	if c := wt.WaitFor(t, w.Changes(), "a change", wt.Any); !wt.Names("a.json")(c) || c.Resync {
		t.Fatalf("change = %+v, want exactly [a.json] (irrelevant names left out)", c)
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

// TestEveryKindOfEventCounts: creating, writing, changing the mode of, renaming onto and
// removing a name each report it. A mode change matters to a reader: a file made
// unreadable must show as unreadable (the DB watcher used to drop it).
func TestEveryKindOfEventCounts(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.json")
	w, err := watchdir.Watch(dir, watchdir.Options{Debounce: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	steps := []struct {
		name string
		do   func() error
	}{
		{"create", func() error { return os.WriteFile(path, []byte("1"), 0o600) }},
		{"write", func() error {
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				return err
			}
			_, err = f.WriteString("2")
			return errors.Join(err, f.Close())
		}},
		{"chmod", func() error { return os.Chmod(path, 0o400) }},
		{"rename over", func() error {
			if err := os.WriteFile(filepath.Join(dir, "b"), []byte("3"), 0o600); err != nil {
				return err
			}
			return os.Rename(filepath.Join(dir, "b"), path)
		}},
		{"remove", func() error { return os.Remove(path) }},
	}
	for _, st := range steps {
		if err := st.do(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		wt.WaitFor(t, w.Changes(), st.name+" of a.json", func(c watchdir.Change) bool {
			return strings.Contains(","+strings.Join(c.Names, ",")+",", ",a.json,")
		})
	}
}

func TestMissingDirIsAnError(t *testing.T) {
	if _, err := watchdir.Watch(filepath.Join(t.TempDir(), "nope"), watchdir.Options{}); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("watching a missing directory: %v", err)
	}
}

func TestOtherErrorsAreNotPolled(t *testing.T) {
	_, err := watchdir.Watch(t.TempDir(), watchdir.Options{Notify: func(string) (*fsnotify.Watcher, error) { return nil, syscall.EACCES }})
	if !errors.Is(err, syscall.EACCES) {
		t.Fatalf("a permission error: %v; only the kernel's resource limits fall back to polling", err)
	}
	if watchdir.WatchLimit(syscall.EACCES) || !watchdir.WatchLimit(fmt.Errorf("x: %w", syscall.ENOSPC)) || !watchdir.WatchLimit(syscall.EMFILE) {
		t.Fatal("WatchLimit misclassifies")
	}
}

func TestFallsBackToPollingAtTheLimit(t *testing.T) {
	for _, cause := range []syscall.Errno{syscall.ENOSPC, syscall.EMFILE} {
		t.Run(cause.Error(), func(t *testing.T) {
			dir := t.TempDir()
			w, err := watchdir.Watch(dir, watchdir.Options{Poll: 20 * time.Millisecond, Notify: wt.Limit(cause)})
			if err != nil {
				t.Fatalf("Watch failed instead of polling: %v", err)
			}
			defer w.Close()
			if m := w.Mode(); !strings.Contains(m, "polling") || !strings.Contains(m, cause.Error()) {
				t.Fatalf("mode %q does not say it polls and why", m)
			}
			writeFile(t, filepath.Join(dir, "a.json"), `{}`)
			wt.WaitFor(t, w.Changes(), "a resync after a create", wt.Resync)
			writeFile(t, filepath.Join(dir, "a.json"), `{"remote":"x"}`)
			wt.WaitFor(t, w.Changes(), "a resync after a write", wt.Resync)
		})
	}
}

// TestReattachesAfterTheDirectoryIsReplaced: the directory is removed and made again;
// the watcher reports a resync at once, says so in Mode, and watches the new directory
// by the kernel again.
func TestReattachesAfterTheDirectoryIsReplaced(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "locks")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	w, err := watchdir.Watch(dir, watchdir.Options{Poll: 20 * time.Millisecond, What: "the locks directory"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	wt.WaitFor(t, w.Changes(), "a resync on removal", wt.Resync)
	if m := w.Mode(); !strings.Contains(m, "the locks directory was removed") {
		t.Fatalf("mode %q does not say the directory went away", m)
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	wt.WaitFor(t, w.Changes(), "a resync on re-attach", wt.Resync)
	wt.WaitMode(t, w, "empty after re-attaching", func(m string) bool { return m == "" })
	writeFile(t, filepath.Join(dir, "b.json"), `{}`)
	wt.WaitFor(t, w.Changes(), "b.json", wt.Names("b.json"))
}

// TestReattachesWhenTheKernelWatchEnds: the kernel watch ends under the watcher (its
// fsnotify instance closed). The lock watcher used to go silent and the DB watcher to
// end its channel; now it reports a resync, says so until it has a new watch, and
// watches again.
func TestReattachesWhenTheKernelWatchEnds(t *testing.T) {
	dir := t.TempDir()
	k := wt.NewKernel()
	w, err := watchdir.Watch(dir, watchdir.Options{Poll: 20 * time.Millisecond, Notify: k.Notify})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	k.Next(t).Close() // the kernel watch ends under the watcher
	wt.WaitFor(t, w.Changes(), "a resync when the watch ended", wt.Resync)
	k.Next(t)
	wt.WaitMode(t, w, "empty after re-attaching", func(m string) bool { return m == "" })
	writeFile(t, filepath.Join(dir, "c.json"), `{}`)
	wt.WaitFor(t, w.Changes(), "c.json on the new watch", wt.Names("c.json"))
}

// TestPollSeesWritesThroughALink: while polling, a name that is a symbolic link reports
// a write to its target (a reader of the name reads the target), and a link that points
// nowhere is still seen to come and go. The lock watcher's poll looked at the link itself
// and missed the write.
func TestPollSeesWritesThroughALink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target.txt") // not a relevant name itself
	writeFile(t, target, "1")
	if err := os.Symlink("target.txt", filepath.Join(dir, "a.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("nowhere", filepath.Join(dir, "dangling.json")); err != nil {
		t.Fatal(err)
	}
	w, err := watchdir.Watch(dir, watchdir.Options{Poll: 20 * time.Millisecond, Relevant: jsonOnly, Notify: wt.Limit(syscall.ENOSPC)})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	writeFile(t, target, "22")
	wt.WaitFor(t, w.Changes(), "a resync after a write through the link", wt.Resync)
	if err := os.Remove(filepath.Join(dir, "dangling.json")); err != nil {
		t.Fatal(err)
	}
	wt.WaitFor(t, w.Changes(), "a resync after a dangling link went", wt.Resync)
}

// TestQuietEndsTheWindowEarly: with Quiet set, a batch is reported once no event came for
// that long, not a whole window after its first event (a window of an hour here: without
// Quiet the change would not come within the wait); and with a Quiet longer than the
// window, a batch still ends with its window.
func TestQuietEndsTheWindowEarly(t *testing.T) {
	for _, o := range []watchdir.Options{
		{Debounce: time.Hour, Quiet: 5 * time.Millisecond, Relevant: jsonOnly},
		{Debounce: 5 * time.Millisecond, Quiet: time.Hour, Relevant: jsonOnly},
	} {
		t.Run(fmt.Sprintf("debounce=%v,quiet=%v", o.Debounce, o.Quiet), func(t *testing.T) {
			dir := t.TempDir()
			w, err := watchdir.Watch(dir, o)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			tmp := filepath.Join(dir, ".tmp-a.json-1")
			writeFile(t, tmp, `{"remote":"origin"}`)
			if err := os.Rename(tmp, filepath.Join(dir, "a.json")); err != nil {
				t.Fatal(err)
			}
			if c := wt.WaitFor(t, w.Changes(), "a change", wt.Any); !wt.Names("a.json")(c) {
				t.Fatalf("change = %+v, want [a.json]", c)
			}
			// A second batch is gathered afresh.
			writeFile(t, filepath.Join(dir, "b.json"), `{}`)
			if c := wt.WaitFor(t, w.Changes(), "the next change", wt.Any); !wt.Names("b.json")(c) {
				t.Fatalf("change = %+v, want [b.json]", c)
			}
		})
	}
}
