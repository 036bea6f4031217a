//go:build linux

package leases

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// writerWouldWait reports whether a writer (any other open file description of the file,
// as another process's SQLite has) is refused the write lock on SQLite's shared lock
// bytes — the lock a connection needs to remove the -wal or change the journal mode. It
// takes the lock and gives it back at once when granted.
func writerWouldWait(t *testing.T, path string) bool {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := ofd(f, unix.F_WRLCK); err != nil {
		if err != errLockBusy {
			t.Fatal(err)
		}
		return true
	}
	if err := ofd(f, unix.F_UNLCK); err != nil {
		t.Fatal(err)
	}
	return false
}

// TestReadLockIsSharedByTheProcessHandles: the read lock a quiescent reader holds is one
// per file and process, shared by its handles: the first hold takes it, a second shares
// it, and a writer is held off until the last hold is released — not at the first
// release, and not forever.
func TestReadLockIsSharedByTheProcessHandles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "control_plane.sqlite3")
	if err := Migrate(path); err != nil {
		t.Fatal(err)
	}
	d, err := fileFor(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	steps := []struct {
		name string
		do   func() error
		held bool // a writer is held off after the step
	}{
		{"before any hold", func() error { return nil }, false},
		{"first hold", func() error { return d.hold(ctx, 0) }, true},
		{"second hold", func() error { return d.hold(ctx, 0) }, true},
		{"first release", func() error { d.release(); return nil }, true},
		{"last release", func() error { d.release(); return nil }, false},
		{"a release too many", func() error { d.release(); return nil }, false},
		{"held again", func() error { return d.hold(ctx, 0) }, true},
		{"released again", func() error { d.release(); return nil }, false},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if got := writerWouldWait(t, path); got != s.held {
			t.Fatalf("after %s: a writer held off %v, want %v", s.name, got, s.held)
		}
	}
}
