package leases

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"
)

// TestStoreOptionsDefaults: an option left zero or negative takes its default — the busy
// timeout, the backend's pool size, a busy budget of 30 s — and one given is kept.
func TestStoreOptionsDefaults(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in, want StoreOptions
	}{
		{StoreOptions{}, StoreOptions{BusyTimeout: busyTimeout, MaxOpenConns: 4, BusyBudget: 30 * time.Second}},
		{StoreOptions{BusyTimeout: -1, MaxOpenConns: -1, BusyBudget: -1},
			StoreOptions{BusyTimeout: busyTimeout, MaxOpenConns: 4, BusyBudget: 30 * time.Second}},
		{StoreOptions{BusyTimeout: time.Second, MaxOpenConns: 1, BusyBudget: time.Millisecond},
			StoreOptions{BusyTimeout: time.Second, MaxOpenConns: 1, BusyBudget: time.Millisecond}},
	} {
		if got := c.in.withDefaults(4); got.BusyTimeout != c.want.BusyTimeout || got.MaxOpenConns != c.want.MaxOpenConns ||
			got.BusyBudget != c.want.BusyBudget {
			t.Errorf("%+v with defaults: %+v, want %+v", c.in, got, c.want)
		}
	}
}

// TestOpenReadWriteTunesOnlyStewardsDB: a store opened on a DB steward created (Migrate:
// WAL) knows it and sets foreign_keys and synchronous=NORMAL on its connection; on a DB
// steward did not create (another writer's, in its rollback journal) it sets neither.
func TestOpenReadWriteTunesOnlyStewardsDB(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	own := filepath.Join(t.TempDir(), "cp.sqlite3")
	if err := Migrate(own); err != nil {
		t.Fatal(err)
	}
	foreign := filepath.Join(t.TempDir(), "cp.sqlite3")
	db, err := sql.Open("sqlite", foreign)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE leases (lease_id TEXT PRIMARY KEY, status TEXT)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	// Another writer's DB with a schema_meta table of its own that records no steward
	// migration: not steward's, and no error.
	meta := filepath.Join(t.TempDir(), "cp.sqlite3")
	if db, err = sql.Open("sqlite", meta); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`CREATE TABLE leases (lease_id TEXT PRIMARY KEY, status TEXT)`,
		`CREATE TABLE schema_meta (key TEXT PRIMARY KEY, value TEXT)`} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	for _, c := range []struct {
		path                string
		steward             bool
		foreignKeys, synced int
	}{{own, true, 1, 1}, {foreign, false, 0, 2}, {meta, false, 0, 2}} {
		s, err := OpenReadWrite(c.path, StoreOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var fk, sync int
		if err := s.db.QueryRowContext(ctx, "PRAGMA foreign_keys").Scan(&fk); err != nil {
			t.Fatal(err)
		}
		if err := s.db.QueryRowContext(ctx, "PRAGMA synchronous").Scan(&sync); err != nil {
			t.Fatal(err)
		}
		s.Close()
		if s.steward != c.steward || fk != c.foreignKeys || sync != c.synced {
			t.Errorf("%s: steward's %v, foreign_keys %d, synchronous %d; want %v, %d, %d",
				c.path, s.steward, fk, sync, c.steward, c.foreignKeys, c.synced)
		}
	}
}
