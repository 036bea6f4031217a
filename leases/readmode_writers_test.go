package leases

import (
	"path/filepath"
	"testing"
)

// TestReaderMapsTheSHMReadOnlyOnlyWithoutAWriterOfItsProcess: in a process that declared
// OnlyOwnWriters, a reader of a WAL DB beside its writers maps the -shm read-only only
// while no Store of its own process has the file open (SQLite shares one mapping per file
// and process, and a writer cannot write through a read-only one); once that Store has
// closed, the next reader maps it read-only again.
func TestReaderMapsTheSHMReadOnlyOnlyWithoutAWriterOfItsProcess(t *testing.T) {
	OnlyOwnWriters()
	defer TestingAllowForeignWriters()
	path := filepath.Join(t.TempDir(), "control_plane.sqlite3")
	if err := Migrate(path); err != nil {
		t.Fatal(err)
	}
	open := func(t *testing.T) *SQLiteReader {
		t.Helper()
		r, err := OpenReadOnly(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		if k := r.Kind(); k != "WAL, shared with its writers" {
			t.Fatalf("reader kind %q", k)
		}
		return r
	}
	s, err := OpenReadWrite(path, StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r := open(t); r.roSHM {
		t.Fatal("a reader opened beside a Store of its own process maps the -shm read-only")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// The first reader's connection keeps the -wal and -shm there.
	if r := open(t); !r.roSHM {
		t.Fatal("a reader opened after its process's Store closed does not map the -shm read-only")
	}
}
