package leases_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"steward/leases"
)

// TestReadAfterItsProcessStoreClosedChangesNothing: once a Store of the reader's own
// process has closed, a read beside a live writer process creates and changes nothing
// again (it maps the -shm read-only, writing no read mark), as it does in a process that
// never wrote the file; and it reads both writers' claims.
func TestReadAfterItsProcessStoreClosedChangesNothing(t *testing.T) {
	leases.OnlyOwnWriters()
	defer leases.TestingAllowForeignWriters()
	dir := t.TempDir()
	path := filepath.Join(dir, "control_plane.sqlite3")
	if err := leases.Migrate(path); err != nil {
		t.Fatal(err)
	}
	s, err := leases.OpenReadWrite(path, leases.StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if out, err := s.Claim(context.Background(), claimReq("in-process", 1), time.Now()); err != nil || !out.OK() {
		t.Fatalf("claim: %+v %v", out, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	w := startWriter(t, path)
	w.claim(2)
	w.claim(3)
	before := dirState(t, dir)
	for range 2 {
		got, err := readAll(path)
		if d := stateDiff(before, dirState(t, dir)); d != "" {
			t.Fatalf("a read changed the DB's directory (%v):\n%s", err, d)
		}
		if want := []int64{1, 2, 3}; err != nil || !slices.Equal(got, want) {
			t.Fatalf("read: active leases on %v (%v), want %v", got, err, want)
		}
	}
	w.claim(4)
	w.quit()
}
