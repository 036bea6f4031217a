package locks

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"steward/locks/lockrec"
)

// archiveFixture writes the canonical lock as a worker would (its bytes as given) and
// returns its name, path and the fence read from it.
func archiveFixture(t *testing.T, dir string, data []byte) (name, path string, fence Expect) {
	t.Helper()
	rec, finds := lockrec.Decode(data)
	if fatal(finds) {
		t.Fatalf("fixture: %+v", finds)
	}
	key, _ := rec.Key()
	name, _ = Name(key)
	path = filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	live := ReadFile(dir, name)
	if live.Unreadable != nil {
		t.Fatalf("fixture unreadable: %v", live.Unreadable)
	}
	return name, path, FenceOf(&live.Record)
}

// An in-place rewrite that lands after the unlink is written back under the live name, and
// the refusal says so in one error; when a new lock took the name meanwhile, the new lock
// is kept, the refusal carries why the write could not go back, and never claims it did.
func TestArchiveRewriteAfterTheUnlinkIsWrittenBackOrSaysWhyNot(t *testing.T) {
	t.Parallel()
	for _, taken := range []bool{false, true} {
		t.Run("name taken "+strconv.FormatBool(taken), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			orig := fixtureBytes(t, "canonical.json")
			name, path, fence := archiveFixture(t, dir, orig)
			next := bytes.Replace(orig, []byte(`"heartbeat_count": 5`), []byte(`"heartbeat_count": 6`), 1)
			newcomer := bytes.Replace(orig, []byte(`"lease_id": "lease-42"`), []byte(`"lease_id": "lease-43"`), 1)
			if bytes.Equal(next, orig) || bytes.Equal(newcomer, orig) {
				t.Fatal("fixture changed: the rewrites change nothing")
			}
			wfd, err := os.OpenFile(path, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer wfd.Close()
			hit := false
			w := &Writer{Step: func(s string) {
				if s != StepLiveRemoved {
					return
				}
				hit = true
				if _, err := wfd.WriteAt(next, 0); err != nil {
					t.Error(err)
				}
				if taken {
					if err := os.WriteFile(path, newcomer, 0o644); err != nil {
						t.Error(err)
					}
				}
			}}
			archived, err := w.Archive(dir, name, fence, lockrec.RecoveryBlock{Action: "retire"})
			if !hit {
				t.Fatal("the unlink was never reached")
			}
			if archived != "" || !errors.Is(err, ErrFenceMoved) {
				t.Fatalf("archive: %q, %v; want ErrFenceMoved", archived, err)
			}
			msg := err.Error()
			want := next
			if taken {
				want = newcomer
				if strings.Contains(msg, "written back") || !errors.Is(err, fs.ErrExist) {
					t.Errorf("the name was taken, so nothing was written back; the error says: %s", msg)
				}
			} else if !strings.HasSuffix(msg, "it was written back") || strings.Contains(msg, "\n") {
				t.Errorf("want one error saying the write went back; got:\n%s", msg)
			}
			if got := mustReadFile(t, path); !bytes.Equal(got, want) {
				t.Errorf("live file after the refusal:\n%s\nwant:\n%s", got, want)
			}
			if ents, _ := os.ReadDir(filepath.Join(dir, retiredDir)); len(ents) != 0 {
				t.Errorf("the archive of a generation that was never retired stayed: %v", ents)
			}
		})
	}
}

// A worker's lock of exactly MaxFileSize bytes is readable, and archiving it is refused
// for what it is: with the recovery block it would be a file steward could not read. It
// is never taken for a lock that moved, and nothing is written.
func TestArchiveOfALockAtTheSizeLimitIsRefusedAsTooLarge(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	orig := fixtureBytes(t, "canonical.json")
	body := bytes.TrimRight(orig, "\n")
	body = body[:len(body)-1] // the closing brace
	body = bytes.TrimRight(body, "\n ")
	pad := MaxFileSize - len(body) - len(",\n  \"padding\": \"\"\n}")
	data := append(append([]byte(nil), body...), []byte(",\n  \"padding\": \""+strings.Repeat("x", pad)+"\"\n}")...)
	if len(data) != MaxFileSize || data[len(data)-1] != '}' {
		t.Fatalf("fixture is %d bytes, want %d ending in }", len(data), MaxFileSize)
	}
	// steward's own check of what it writes takes the limit itself, and not a byte more.
	if err := readable(data); err != nil {
		t.Fatalf("a record of exactly %d bytes refused: %v", MaxFileSize, err)
	}
	if err := readable(append(append([]byte(nil), data[:len(data)-1]...), ' ', '}')); !errors.Is(err, errWouldBeUnreadable) {
		t.Fatalf("a record of %d bytes: %v, want ErrWouldBeUnreadable", MaxFileSize+1, err)
	}
	name, path, fence := archiveFixture(t, dir, data)
	archived, err := (&Writer{}).Archive(dir, name, fence, lockrec.RecoveryBlock{Action: "retire"})
	if archived != "" || !errors.Is(err, errWouldBeUnreadable) {
		t.Fatalf("archive of a %d-byte lock: %q, %v; want ErrWouldBeUnreadable", len(data), archived, err)
	}
	if got := mustReadFile(t, path); !bytes.Equal(got, data) {
		t.Error("the live lock changed")
	}
	if ents, _ := os.ReadDir(filepath.Join(dir, retiredDir)); len(ents) != 0 {
		t.Errorf("retired/ holds %d files after the refusal", len(ents))
	}
}

// Archives of one live name in one second are numbered -2, -3, … in order, up to -1000;
// past that Archive refuses rather than loop or overwrite.
func TestArchiveNamesInOneSecondCountUpToAThousand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rec := decodeFixture(t, "canonical.json")
	key, _ := rec.Key()
	name, _ := Name(key)
	at := time.Date(2026, 7, 24, 6, 30, 0, 0, time.UTC)
	w := &Writer{Now: func() time.Time { return at }}
	stamp := at.Format("20060102T150405Z")
	archive := func() (string, error) {
		t.Helper()
		if _, err := WriteCAS(dir, name, ExpectAbsent(), rec); err != nil {
			t.Fatal(err)
		}
		live := ReadFile(dir, name)
		return w.Archive(dir, name, FenceOf(&live.Record), lockrec.RecoveryBlock{Action: "release"})
	}
	for i, suffix := range []string{"", "-2", "-3", "-4"} {
		got, err := archive()
		if want := retiredDir + "/" + archiveName(name, stamp+suffix, 1); err != nil || got != want {
			t.Fatalf("archive %d: %q, %v; want %q", i+1, got, err, want)
		}
	}
	// -5 … -999 taken as well: the next is the thousandth, and the one after is refused.
	for n := 5; n <= 999; n++ {
		if err := os.WriteFile(filepath.Join(dir, retiredDir, archiveName(name, stamp+"-"+strconv.Itoa(n), 1)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := archive(); err != nil || got != retiredDir+"/"+archiveName(name, stamp+"-1000", 1) {
		t.Fatalf("archive 1000: %q, %v", got, err)
	}
	if got, err := archive(); !errors.Is(err, ErrExists) {
		t.Fatalf("archive 1001: %q, %v; want ErrExists", got, err)
	}
	if e := ReadFile(dir, name); e.Missing || e.Unreadable != nil {
		t.Fatalf("the refused archive touched the live lock: %+v", e)
	}
}

// Restore writes the record back as the worker wrote it: a field it left blank comes back
// blank, not dropped.
func TestRestoreKeepsBlankFields(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	orig := bytes.Replace(fixtureBytes(t, "canonical.json"), []byte(`"expected_base_sha": "5de768ffda"`), []byte(`"expected_base_sha": ""`), 1)
	if !bytes.Contains(orig, []byte(`"expected_base_sha": ""`)) {
		t.Fatal("fixture changed")
	}
	name, _, fence := archiveFixture(t, dir, orig)
	archived, err := (&Writer{}).Archive(dir, name, fence, lockrec.RecoveryBlock{Action: "retire"})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := restore(dir, archived); err != nil {
		t.Fatal(err)
	}
	got := ReadFile(dir, name)
	if got.Unreadable != nil || !bytes.Contains(got.Record.Raw, []byte(`"expected_base_sha": ""`)) {
		t.Errorf("restored lock lost its blank field:\n%s", got.Record.Raw)
	}
	if bytes.Contains(got.Record.Raw, []byte("steward_recovery")) {
		t.Errorf("restored lock keeps the recovery block:\n%s", got.Record.Raw)
	}
}
