// Package watchdirtest helps the tests of watchdir's users: a kernel whose watches a test
// can end, one that refuses watches as an exhausted inotify limit does, and a wait for a
// change. It is imported by tests only.
package watchdirtest

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"

	"steward/watchdir"
)

// Kernel makes real fsnotify watches and hands each to the test (Next), so that it can
// end one under the watcher.
type Kernel struct{ made chan *fsnotify.Watcher }

// NewKernel returns a Kernel that can hand out up to 16 watches not yet taken.
func NewKernel() *Kernel { return &Kernel{made: make(chan *fsnotify.Watcher, 16)} }

// Notify is the watchdir.NotifyFunc that makes the watches.
func (k *Kernel) Notify(dir string) (*fsnotify.Watcher, error) {
	fw, err := watchdir.Fsnotify(dir)
	if err == nil {
		k.made <- fw
	}
	return fw, err
}

// Next waits for the next watch made (at most 10 s).
func (k *Kernel) Next(t testing.TB) *fsnotify.Watcher {
	t.Helper()
	select {
	case fw := <-k.made:
		return fw
	case <-time.After(10 * time.Second):
		t.Fatal("waited 10s for a new kernel watch")
		return nil
	}
}

// Limit is a watchdir.NotifyFunc that fails as the kernel does when a resource limit is
// exhausted (cause: syscall.ENOSPC or syscall.EMFILE).
func Limit(cause syscall.Errno) watchdir.NotifyFunc {
	return func(string) (*fsnotify.Watcher, error) {
		return nil, fmt.Errorf("inotify_add_watch: %w", cause)
	}
}

// WaitFor waits (at most 10 s) for a change that satisfies ok; the channel closing fails
// the test.
func WaitFor(t testing.TB, ch <-chan watchdir.Change, what string, ok func(watchdir.Change) bool) watchdir.Change {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case c, open := <-ch:
			if !open {
				t.Fatalf("the channel closed while waiting for %s", what)
			}
			if ok(c) {
				return c
			}
		case <-deadline:
			t.Fatalf("waited 10s for %s", what)
		}
	}
}

// Resync reports whether c asks for a resync.
func Resync(c watchdir.Change) bool { return c.Resync }

// Any accepts every change.
func Any(watchdir.Change) bool { return true }

// Names accepts a change naming exactly want (sorted).
func Names(want ...string) func(watchdir.Change) bool {
	return func(c watchdir.Change) bool { return strings.Join(c.Names, ",") == strings.Join(want, ",") }
}

// Named accepts a change naming at least one name.
func Named(c watchdir.Change) bool { return len(c.Names) > 0 }

// WaitMode polls w's published mode until ok (at most 5 s): a published state, not
// synchronisation.
func WaitMode(t testing.TB, w *watchdir.Watcher, what string, ok func(string) bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !ok(w.Mode()) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if !ok(w.Mode()) {
		t.Fatalf("mode %q: want %s", w.Mode(), what)
	}
}
