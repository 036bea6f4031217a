package app_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"steward/app"
	"steward/config"
	"steward/model"
)

// TestOpenAll: every workspace of the configuration opened through the one assembly —
// two real workspaces (lock directories and SQLite DBs), the second on another host:
// each session reads its own sources, and the other host's lock files are not observed.
func TestOpenAll(t *testing.T) {
	w := newWorld(t)
	other := t.TempDir()
	if err := os.CopyFS(other, os.DirFS("../testdata/workspace")); err != nil {
		t.Fatal(err)
	}
	// The second workspace's DB loses its leases: its claims are its own.
	if err := os.Remove(filepath.Join(other, "locks", firstLock(t, other))); err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(w.file(""), "workspaces:\n", "workspaces:\n  far:\n    locks_dir: OTHER/locks\n    db_path: OTHER/control_plane.sqlite3\n    host: build-02\n  near:\n    locks_dir: OTHER/locks\n    db_path: OTHER/control_plane.sqlite3\n", 1)
	text = strings.ReplaceAll(text, "OTHER", other)
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	env := func(k string) (string, bool) { v, ok := w.env[k]; return v, ok }
	rs, err := config.LoadAll(config.Inputs{Path: path, Getenv: env, SystemPaths: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		for _, p := range r.Problems {
			if p.Severity == config.SevError {
				t.Fatalf("%s: %s", r.Name(), p.Message)
			}
		}
	}
	all, err := app.AllFromConfig(rs, env)
	if err != nil {
		t.Fatal(err)
	}
	for i := range all {
		all[i].Now = func() time.Time { return w.now }
	}
	sessions, err := app.OpenAll(context.Background(), all)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, s := range sessions {
			s.Close()
		}
	}()
	var names []string
	snaps := map[string]*model.Snapshot{}
	for _, s := range sessions {
		names = append(names, s.Name())
		snaps[s.Name()] = s.Snapshot(context.Background())
	}
	if strings.Join(names, ",") != "w,far,near" {
		t.Fatalf("sessions %v, want the default first, then by name", names)
	}
	locked := func(s *model.Snapshot) (n int) {
		for _, c := range s.Claims {
			if c.LockFile != "" {
				n++
			}
		}
		return n
	}
	w0, far, near := snaps["w"], snaps["far"], snaps["near"]
	if w0.Sources.Locks.Status != model.StatusOK || locked(w0) != 5 {
		t.Fatalf("w: locks %s, %d claims of a lock", w0.Sources.Locks.Status, locked(w0))
	}
	if near.Sources.Locks.Status != model.StatusOK || locked(near) != 4 {
		t.Fatalf("near (its own lock directory, one lock fewer): locks %s, %d claims of a lock", near.Sources.Locks.Status, locked(near))
	}
	if far.Sources.Locks.Status != model.StatusNotObserved || locked(far) != 0 || far.Sources.DB.Status != model.StatusOK || len(far.Claims) == 0 {
		t.Fatalf("far (on build-02): locks %s, %d claims of a lock, db %s, %d claims", far.Sources.Locks.Status, locked(far), far.Sources.DB.Status, len(far.Claims))
	}
}

func firstLock(t *testing.T, dir string) string {
	t.Helper()
	es, err := os.ReadDir(filepath.Join(dir, "locks"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		if strings.HasSuffix(e.Name(), ".json") {
			return e.Name()
		}
	}
	t.Fatal("no lock in the sample")
	return ""
}
