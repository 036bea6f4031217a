package locks

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"steward/locks/lockrec"
)

// TestArchiveKeepsAnInPlaceRewrite: a worker that rewrites its lock
// in place (same inode, without steward's flock, as the supervised system's workers do not
// know it) while Archive runs must not lose its write. Before the fix Archive checked only
// the inode before removing the live file: the live file was gone and the archive held the
// older generation. Now Archive compares the content before the unlink (and through its
// open descriptor right after it): a moved content keeps (or puts back) the live file,
// removes the stale archive and refuses ErrFenceMoved.
func TestArchiveKeepsAnInPlaceRewrite(t *testing.T) {
	t.Parallel()
	for _, at := range []string{StepLocked, StepTempWritten, StepRenamed, StepDirSynced, StepLiveRemoved} {
		t.Run(at, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			rec := decodeFixture(t, "canonical.json")
			key, _ := rec.Key()
			name, _ := Name(key)
			if _, err := WriteCAS(dir, name, ExpectAbsent(), rec); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, name)
			live := ReadFile(dir, name)
			// The worker's next generation, written in place through a descriptor it
			// opened before the archive began (the same inode throughout).
			next := bytes.Replace(mustReadFile(t, path), []byte(`"heartbeat_count": `), []byte(`"heartbeat_count": 9`), 1)
			if bytes.Equal(next, mustReadFile(t, path)) {
				t.Fatal("fixture has no heartbeat_count to bump")
			}
			wfd, err := os.OpenFile(path, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer wfd.Close()
			rewrote := false
			w := &Writer{Step: func(s string) {
				if s != at || rewrote {
					return
				}
				rewrote = true
				if err := wfd.Truncate(0); err != nil {
					t.Error(err)
				}
				if _, err := wfd.WriteAt(next, 0); err != nil {
					t.Error(err)
				}
			}}
			archived, err := w.Archive(dir, name, FenceOf(&live.Record), lockrec.RecoveryBlock{Action: "retire"})
			if !rewrote {
				t.Fatalf("step %s never reached", at)
			}
			if at == StepLocked {
				// Written before Archive read it: the worker's write is what gets archived.
				want, _ := lockrec.Decode(next)
				a := ReadFile(dir, archived)
				if err != nil || !ReadFile(dir, name).Missing || a.Unreadable != nil ||
					*a.Record.WorkLease.HeartbeatCount != *want.WorkLease.HeartbeatCount {
					t.Fatalf("rewrite before the read: %q %v; archived %+v", archived, err, a.Record.WorkLease)
				}
				return
			}
			if !errors.Is(err, ErrFenceMoved) {
				t.Fatalf("archive after an in-place rewrite at %s: %q, %v; want ErrFenceMoved", at, archived, err)
			}
			got, rerr := os.ReadFile(path)
			if rerr != nil {
				t.Fatalf("the live file is gone after the rewrite at %s: %v", at, rerr)
			}
			if !bytes.Equal(got, next) {
				t.Fatalf("the live file lost the worker's write at %s:\n%s", at, got)
			}
			s, err := LoadDir(dir, LoadOptions{Retired: true})
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Live) != 1 || len(s.Retired) != 0 {
				t.Fatalf("after the refusal: %d live, %d archived; want the live lock alone", len(s.Live), len(s.Retired))
			}
			for _, de := range mustReadDir(t, dir) {
				if strings.HasPrefix(de, ".tmp-") || strings.HasPrefix(de, ".keep-") {
					t.Errorf("left behind %s", de)
				}
			}
		})
	}
}

func mustReadFile(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustReadDir(t *testing.T, d string) []string {
	t.Helper()
	ents, err := os.ReadDir(d)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// TestArchiveReportsTheRetiredDirectoryItCouldNotSync: when the live lock moved on while it
// was archived, Archive removes its own archive again and makes that removal durable; a
// retired directory it can no longer sync is named in the error beside the fence refusal,
// never dropped (the caller would take the removal for durable).
func TestArchiveReportsTheRetiredDirectoryItCouldNotSync(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rec := decodeFixture(t, "canonical.json")
	key, _ := rec.Key()
	name, _ := Name(key)
	if _, err := WriteCAS(dir, name, ExpectAbsent(), rec); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	live := ReadFile(dir, name)
	next := bytes.Replace(mustReadFile(t, path), []byte(`"heartbeat_count": `), []byte(`"heartbeat_count": 9`), 1)
	rdir := filepath.Join(dir, retiredDir)
	moved := false
	w := &Writer{Step: func(s string) {
		if s != StepDirSynced || moved {
			return
		}
		moved = true
		// The worker rewrites its lock in place, and the retired directory goes away
		// under the archive just written there.
		if err := os.WriteFile(path, next, 0o600); err != nil {
			t.Error(err)
		}
		if err := os.Rename(rdir, rdir+"-gone"); err != nil {
			t.Error(err)
		}
	}}
	_, err := w.Archive(dir, name, FenceOf(&live.Record), lockrec.RecoveryBlock{Action: "retire"})
	if !moved {
		t.Fatal("step dir-synced never reached")
	}
	if !errors.Is(err, ErrFenceMoved) {
		t.Fatalf("archive after an in-place rewrite: %v; want ErrFenceMoved", err)
	}
	if !strings.Contains(err.Error(), "fsync") || !strings.Contains(err.Error(), rdir) {
		t.Fatalf("the failed sync of %s is not reported: %v", rdir, err)
	}
	if got := mustReadFile(t, path); !bytes.Equal(got, next) {
		t.Fatalf("the live file lost the worker's write:\n%s", got)
	}
}

// TestArchiveNamesTheArchiveItCouldNotRemove: when the live lock moved on while it was
// archived and Archive cannot remove its own archive again, the archive stays in retired/
// holding a generation that was never retired. Archive returns its name beside
// ErrFenceMoved and the removal's error, so the caller can say a copy was left (before, it
// returned no name, and the retire's refusal said nothing was changed). No permission stops
// an unlink by root, so the removal is made to fail by a non-empty directory put in the
// archive's place.
func TestArchiveNamesTheArchiveItCouldNotRemove(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rec := decodeFixture(t, "canonical.json")
	key, _ := rec.Key()
	name, _ := Name(key)
	if _, err := WriteCAS(dir, name, ExpectAbsent(), rec); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	live := ReadFile(dir, name)
	next := bytes.Replace(mustReadFile(t, path), []byte(`"heartbeat_count": `), []byte(`"heartbeat_count": 9`), 1)
	rdir := filepath.Join(dir, retiredDir)
	var left string
	w := &Writer{Step: func(s string) {
		if s != StepDirSynced || left != "" {
			return
		}
		names := mustReadDir(t, rdir)
		if len(names) != 1 {
			t.Fatalf("retired/ holds %v, want the archive alone", names)
		}
		left = names[0]
		// The worker rewrites its lock in place; the archive cannot be removed.
		if err := os.WriteFile(path, next, 0o600); err != nil {
			t.Error(err)
		}
		a := filepath.Join(rdir, left)
		if err := os.Rename(a, filepath.Join(dir, "saved")); err != nil {
			t.Error(err)
		}
		if err := os.MkdirAll(filepath.Join(a, "x"), 0o700); err != nil {
			t.Error(err)
		}
	}}
	archived, err := w.Archive(dir, name, FenceOf(&live.Record), lockrec.RecoveryBlock{Action: "retire"})
	if left == "" {
		t.Fatal("step dir-synced never reached")
	}
	if !errors.Is(err, ErrFenceMoved) || !strings.Contains(err.Error(), filepath.Join(rdir, left)) {
		t.Fatalf("archive: %v; want ErrFenceMoved and the archive it could not remove", err)
	}
	if archived != retiredDir+"/"+left {
		t.Errorf("archive returned %q, want the archive left behind, %q", archived, retiredDir+"/"+left)
	}
	if got := mustReadFile(t, path); !bytes.Equal(got, next) {
		t.Fatalf("the live file lost the worker's write:\n%s", got)
	}
}
