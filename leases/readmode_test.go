package leases

import (
	"database/sql"
	"os"
	"path/filepath"
	"testing"
)

// TestWALFrames: a -wal whose first frame checks out is one SQLite would replay (a read
// without its -shm is refused); a -wal cut short, with a broken header or a damaged first
// frame is one SQLite ignores (the main file is then the DB).
func TestWALFrames(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "db")
	db, err := sql.Open("sqlite", "file:"+p)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	for _, q := range []string{"PRAGMA journal_mode=WAL", "PRAGMA wal_autocheckpoint=0", "CREATE TABLE t(x)", "INSERT INTO t VALUES(1)"} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	wal, err := os.ReadFile(p + "-wal") // read while the connection holds it: frames not yet checkpointed
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	if len(wal) < 32+24+512 {
		t.Fatalf("set-up: a -wal of %d bytes", len(wal))
	}
	flip := func(i int) []byte { b := append([]byte(nil), wal...); b[i] ^= 0x40; return b }
	for _, tc := range []struct {
		name   string
		data   []byte
		frames bool
	}{
		{"as written", wal, true},
		{"empty", nil, false},
		{"header only", wal[:32], false},
		{"first frame cut short", wal[:32+24+100], false},
		{"bad magic", flip(0), false},
		{"bad header checksum", flip(24), false},
		{"salt of another generation", flip(32 + 8), false},
		{"damaged page", flip(32 + 24 + 200), false},
		{"garbage", []byte("garbage!garbage!garbage!garbage!garbage!"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := filepath.Join(dir, "x-wal")
			if err := os.WriteFile(f, tc.data, 0o600); err != nil {
				t.Fatal(err)
			}
			got, sig, err := walFrames(f)
			if err != nil || got != tc.frames || !sig.ok || sig.size != int64(len(tc.data)) {
				t.Fatalf("walFrames: %v %+v %v, want %v", got, sig, err, tc.frames)
			}
		})
	}
}
