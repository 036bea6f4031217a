package locks

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"steward/locks/lockrec"
)

// dirState hashes every file under dir (names and bytes), sidecar flocks aside.
func dirState(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(p, ".flock") {
			return nil
		}
		data, _ := os.ReadFile(p)
		h := sha256.Sum256(data)
		b.WriteString(p + " " + hex.EncodeToString(h[:]) + "\n")
		return nil
	})
	return b.String()
}

// withPadding is rec with an unknown field holding n bytes of text.
func withPadding(rec lockrec.Record, n int) lockrec.Record {
	rec.Extra = append(append([]lockrec.RawField(nil), rec.Extra...), lockrec.RawField{Key: "padding", Value: []byte(`"` + strings.Repeat("p", n) + `"`)})
	return rec
}

// TestWriteNeverMakesALockStewardCannotRead: every write primitive checks the bytes it is
// about to write against steward's own reader — at most MaxFileSize, a record Decode reads —
// and refuses, before anything is written, what steward would then report unreadable. Before
// the check a 1.2 MB record was written as it was, and the item showed unreadable-lock, its
// heartbeat refused fence_moved and every later claim was refused until it was deleted by
// hand.
func TestWriteNeverMakesALockStewardCannotRead(t *testing.T) {
	t.Parallel()
	rec := decodeFixture(t, "unknown-fields.json")
	name, _ := Name(lockrec.Key{Remote: "prgs", Org: "o", Repo: "r", Issue: 658})

	t.Run("new lock over the limit", func(t *testing.T) {
		dir := t.TempDir()
		_, err := WriteCAS(dir, name, ExpectAbsent(), withPadding(rec, MaxFileSize))
		if !errors.Is(err, errWouldBeUnreadable) || !strings.Contains(err.Error(), "over the 1048576") {
			t.Fatalf("err %v, want ErrWouldBeUnreadable", err)
		}
		if s := dirState(t, dir); s != "" {
			t.Fatalf("the refused write left files:\n%s", s)
		}
		// Just under the limit is written and reads back whole.
		if _, err := WriteCAS(dir, name, ExpectAbsent(), withPadding(rec, MaxFileSize-8<<10)); err != nil {
			t.Fatal(err)
		}
		if e := ReadFile(dir, name); e.Unreadable != nil {
			t.Fatalf("a lock just under the limit reads %+v", e.Unreadable)
		}
	})

	t.Run("rewrite over the limit", func(t *testing.T) {
		dir := t.TempDir()
		if _, err := WriteCAS(dir, name, ExpectAbsent(), rec); err != nil {
			t.Fatal(err)
		}
		cur := ReadFile(dir, name)
		before := dirState(t, dir)
		if _, err := WriteCAS(dir, name, FenceOf(&cur.Record), withPadding(cur.Record, MaxFileSize)); !errors.Is(err, errWouldBeUnreadable) {
			t.Fatalf("err %v, want ErrWouldBeUnreadable", err)
		}
		if after := dirState(t, dir); after != before {
			t.Fatalf("the refused rewrite changed the directory:\n%s\n%s", before, after)
		}
	})

	t.Run("archive pushed over the limit by its recovery block", func(t *testing.T) {
		dir := t.TempDir()
		// A lock someone else wrote just under the limit: readable, but its archive (the
		// same record plus steward's recovery block) would not be.
		if _, err := WriteCAS(dir, name, ExpectAbsent(), withPadding(rec, MaxFileSize-2048)); err != nil {
			t.Fatal(err)
		}
		cur := ReadFile(dir, name)
		if cur.Unreadable != nil {
			t.Fatalf("setup: %+v", cur.Unreadable)
		}
		before := dirState(t, dir)
		_, err := archive(dir, name, FenceOf(&cur.Record), lockrec.RecoveryBlock{Action: "retire_lock", Reason: strings.Repeat("r", 4096)})
		if !errors.Is(err, errWouldBeUnreadable) {
			t.Fatalf("err %v, want ErrWouldBeUnreadable", err)
		}
		if after := dirState(t, dir); after != before {
			t.Fatalf("the refused archive changed the directory:\n%s\n%s", before, after)
		}
	})
}
