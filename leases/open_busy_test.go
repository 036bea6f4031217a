package leases

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"
)

// TestHandlesWaitTheirBusyTimeout: every SQLite handle steward opens waits for a lock held
// by another writer as long as configured — a Store its BusyTimeout (5 s unless set), a
// reader 5 s — before it answers busy: SQLite's busy_timeout, in milliseconds, on each
// connection.
func TestHandlesWaitTheirBusyTimeout(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "control_plane.sqlite3")
	if err := Migrate(path); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	busy := func(t *testing.T, what string, db *sql.DB, want int) {
		t.Helper()
		var ms int
		if err := db.QueryRowContext(ctx, `PRAGMA busy_timeout`).Scan(&ms); err != nil || ms != want {
			t.Errorf("%s: busy_timeout %d ms %v, want %d", what, ms, err, want)
		}
	}
	for _, c := range []struct {
		set  time.Duration
		want int
	}{{0, 5000}, {1500 * time.Millisecond, 1500}, {20 * time.Millisecond, 20}} {
		s, err := OpenReadWrite(path, StoreOptions{BusyTimeout: c.set})
		if err != nil {
			t.Fatal(err)
		}
		busy(t, "a store with BusyTimeout "+c.set.String(), s.db, c.want)
		s.Close()
	}
	r, err := OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	busy(t, "a reader", r.db, 5000)
}
