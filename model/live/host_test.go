package live

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"steward/model"
)

// TestLiveLocksOnAnotherHost: the live model of a workspace whose lock directory is on
// another host neither lists nor watches it — its lock source reads not observed from the
// start, no claim of a lock is made of the files there, and the DB is read as usual.
func TestLiveLocksOnAnotherHost(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("../../testdata/workspace")); err != nil {
		t.Fatal(err)
	}
	ws := Workspace{LocksDir: filepath.Join(dir, "locks"), DBPath: filepath.Join(dir, "control_plane.sqlite3"), RepoRoot: filepath.Join(dir, "repo")}
	for _, tc := range []struct {
		host   string
		status model.Status
		locked bool
	}{{"", model.StatusOK, true}, {"build-02", model.StatusNotObserved, false}} {
		ws.Host = tc.host
		m := New(ws, Options{Now: func() time.Time { return now }})
		if err := m.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		s := m.Current()
		m.Close()
		locked := false
		for _, c := range s.Claims {
			locked = locked || c.LockFile != ""
		}
		if s.Sources.Locks.Status != tc.status || locked != tc.locked || s.Sources.DB.Status != model.StatusOK || len(s.Claims) == 0 {
			t.Errorf("host %q: locks %s (%s), claims of a lock %v, db %s, %d claims", tc.host, s.Sources.Locks.Status, s.Sources.Locks.Reason, locked, s.Sources.DB.Status, len(s.Claims))
		}
		if tc.host != "" && m.lw != nil {
			t.Errorf("host %q: the lock directory is watched", tc.host)
		}
	}
}
