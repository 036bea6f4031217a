package locks

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
)

// limitNotify fails as the kernel does when the inotify watch limit is exhausted.
func limitNotify(string) (*fsnotify.Watcher, error) {
	return nil, fmt.Errorf("inotify_add_watch: %w", syscall.ENOSPC)
}

// waitResync waits for a change that asks for a resync.
func waitResync(t *testing.T, ch <-chan Change) Change {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case c, ok := <-ch:
			if !ok {
				t.Fatal("channel closed")
			}
			if c.Resync {
				return c
			}
		case <-deadline:
			t.Fatal("no resync within 10s")
		}
	}
}

func TestWatchFallsBackToPollingAtTheInotifyLimit(t *testing.T) {
	for _, cause := range []error{syscall.ENOSPC, syscall.EMFILE} {
		dir := t.TempDir()
		w, err := Watch(dir, WatchOptions{Poll: 20 * time.Millisecond,
			Notify: func(string) (*fsnotify.Watcher, error) { return nil, fmt.Errorf("inotify: %w", cause) }})
		if err != nil {
			t.Fatalf("%v: Watch failed instead of polling: %v", cause, err)
		}
		if m := w.Mode(); !strings.Contains(m, "polling") || !strings.Contains(m, cause.Error()) {
			t.Fatalf("mode %q does not say it polls and why", m)
		}
		writeFile(t, filepath.Join(dir, "a.json"), []byte(`{}`))
		waitResync(t, w.Changes())
		writeFile(t, filepath.Join(dir, "a.json"), []byte(`{"remote":"x"}`))
		waitResync(t, w.Changes())
		w.Close()
	}
}

func TestWatchOtherErrorsAreNotPolled(t *testing.T) {
	_, err := Watch(t.TempDir(), WatchOptions{Notify: func(string) (*fsnotify.Watcher, error) { return nil, syscall.EACCES }})
	if err == nil {
		t.Fatal("a permission error fell back to polling; only the kernel's resource limits may")
	}
	if WatchLimit(syscall.EACCES) || !WatchLimit(fmt.Errorf("x: %w", syscall.ENOSPC)) {
		t.Fatal("WatchLimit misclassifies")
	}
}

// TestWatchReattachesAfterTheDirectoryIsReplaced: the locks directory is removed and made
// again; the watcher reports a resync at once, says so in Mode, and watches the new
// directory by inotify again.
func TestWatchReattachesAfterTheDirectoryIsReplaced(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "locks")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	w, err := Watch(dir, WatchOptions{Poll: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	waitResync(t, w.Changes())
	if m := w.Mode(); !strings.Contains(m, "removed") {
		t.Fatalf("mode %q does not say the directory went away", m)
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	waitResync(t, w.Changes()) // re-attached
	deadline := time.Now().Add(5 * time.Second)
	for w.Mode() != "" && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond) // polling a published state, not synchronisation
	}
	if w.Mode() != "" {
		t.Fatalf("mode %q after re-attaching", w.Mode())
	}
	writeFile(t, filepath.Join(dir, "b.json"), []byte(`{}`))
	for {
		c := waitChange(t, w.Changes())
		if len(c.Names) == 1 && c.Names[0] == "b.json" {
			break
		}
	}
}
