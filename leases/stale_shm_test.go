package leases_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"steward/leases"
)

// TestReadBesideAStaleSHM: a WAL-mode DB with a -shm but no -wal (no connection has it
// open: a connection opens the -wal first; a -wal deleted by hand, or a copy of the DB
// and its -shm without the -wal, leaves the -shm) is read as the quiescent file it is — exactly, changing nothing
// beside it, read after read — and a writer that comes later is seen. Before, the file was
// opened as quiescent but every read then found it did not fit (a -shm was there) and
// answered "database is busy (the DB's journal files kept changing)" for ever.
func TestReadBesideAStaleSHM(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "control_plane.sqlite3")
	if err := leases.Migrate(path); err != nil {
		t.Fatal(err)
	}
	s, err := leases.OpenReadWrite(path, leases.StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if out, err := s.Claim(ctx, claimReq("s1", 1), time.Now()); err != nil || !out.OK() {
		t.Fatalf("claim: %+v %v", out, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(path + "-wal"); !os.IsNotExist(err) {
		t.Fatalf("fixture: a -wal after the writer closed (%v)", err)
	}
	if err := os.WriteFile(path+"-shm", make([]byte, 32<<10), 0o644); err != nil {
		t.Fatal(err)
	}
	items := func(r *leases.SQLiteReader) []int64 {
		t.Helper()
		snap, err := r.Snapshot(ctx, leases.ReadOptions{})
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		var out []int64
		for _, l := range snap.Leases {
			out = append(out, l.WorkItemID)
		}
		slices.Sort(out)
		return out
	}
	before := dirState(t, dir)
	r, err := leases.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for range 3 {
		if got := items(r); !slices.Equal(got, []int64{1}) {
			t.Fatalf("leases on items %v, want [1]", got)
		}
		if d := stateDiff(before, dirState(t, dir)); d != "" {
			t.Fatalf("a read changed the DB's directory:\n%s", d)
		}
	}
	w := startWriter(t, path)
	w.claim(2)
	if got := items(r); !slices.Equal(got, []int64{1, 2}) {
		t.Errorf("after a writer came: leases on items %v, want [1 2]", got)
	}
	w.quit()
}
