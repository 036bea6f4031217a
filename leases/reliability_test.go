package leases

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
	"steward/leases/leaserec"
)

// TestOpenReadOnlyRefusesAFIFO: SQLite opens without O_NONBLOCK, so a FIFO at the DB
// path would block the open forever; it is refused as not a database instead.
func TestOpenReadOnlyRefusesAFIFO(t *testing.T) {
	p := filepath.Join(t.TempDir(), "db.sqlite3")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		r, err := OpenReadOnly(p)
		if err == nil {
			r.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, ErrNotSQLite) || !strings.Contains(err.Error(), "not a regular file") {
			t.Fatalf("err = %v, want ErrNotSQLite (not a regular file)", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("OpenReadOnly blocked on a FIFO")
	}
}

// TestLivenessOutOfPidRange: kill(2) takes a 32-bit pid_t; a larger recorded pid would be
// truncated (2^40 → 0: this process group, "alive"; 2^32-1 → -1: every process).
func TestLivenessOutOfPidRange(t *testing.T) {
	host, _ := os.Hostname()
	for _, pid := range []int{1 << 40, 1<<32 - 1, math.MaxInt32 + 1, math.MaxInt} {
		if got := Liveness(pid, host); got != leaserec.ProcessUnknown {
			t.Errorf("Liveness(%d) = %s, want unknown", pid, got)
		}
	}
	if got := Liveness(os.Getpid(), host); got != leaserec.ProcessAlive {
		t.Errorf("own pid: %s", got)
	}
}

// TestReaderReplaced: a reader notices that a new file was renamed over its path, or that
// the file was removed; its next read follows the path (a removed DB is missing
// authority), never the file it opened first.
func TestReaderReplaced(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.sqlite3")
	if err := Migrate(p); err != nil {
		t.Fatal(err)
	}
	r, err := OpenReadOnly(p)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Replaced() {
		t.Fatal("fresh reader reads as replaced")
	}
	q := filepath.Join(dir, "b.sqlite3")
	if err := Migrate(q); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	v0, err := r.DataVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(q, p); err != nil {
		t.Fatal(err)
	}
	if !r.Replaced() {
		t.Fatal("rename over the path not noticed")
	}
	v1, err := r.DataVersion(ctx)
	if err != nil {
		t.Fatalf("the reader could not read the file renamed over its path: %v", err)
	}
	if v1 == v0 || r.Replaced() {
		t.Fatalf("the reader did not move to the new file (version %d -> %d, replaced %v)", v0, v1, r.Replaced())
	}
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if !r.Replaced() {
		t.Fatal("removal not noticed")
	}
	if _, err := r.DataVersion(ctx); !errors.Is(err, ErrNoDB) {
		t.Fatalf("a read of a removed DB: %v, want ErrNoDB", err)
	}
}

// TestWatchDBPollsAtTheInotifyLimit: with the kernel refusing a watch (ENOSPC), WatchDB
// polls the DB files, says so in Mode, and still reports a commit.
func TestWatchDBPollsAtTheInotifyLimit(t *testing.T) {
	p := filepath.Join(t.TempDir(), "cp.sqlite3")
	if err := Migrate(p); err != nil {
		t.Fatal(err)
	}
	w, err := WatchDBWith(p, DBWatchOptions{Poll: 20 * time.Millisecond,
		Notify: func(string) (*fsnotify.Watcher, error) {
			return nil, fmt.Errorf("inotify_add_watch: %w", syscall.ENOSPC)
		}})
	if err != nil {
		t.Fatalf("WatchDBWith failed instead of polling: %v", err)
	}
	defer w.Close()
	if m := w.Mode(); !strings.Contains(m, "polling") || !strings.Contains(m, "no space left") {
		t.Fatalf("mode %q", m)
	}
	s, err := OpenReadWrite(p, StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.db.Exec(`INSERT INTO events (event_type, created_at) VALUES ('x', '2026-01-01T00:00:00Z')`); err != nil {
		t.Fatal(err)
	}
	select {
	case _, ok := <-w.Changes():
		if !ok {
			t.Fatal("closed")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the polling watcher saw no commit")
	}
	if _, err := WatchDBWith(p, DBWatchOptions{Notify: func(string) (*fsnotify.Watcher, error) { return nil, syscall.EACCES }}); err == nil {
		t.Fatal("a permission error fell back to polling")
	}
}
