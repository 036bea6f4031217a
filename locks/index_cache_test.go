package locks

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"steward/locks/lockrec"
)

// The index is a cache keyed by each file's inode, size and modification time: a file
// whose stat did not change is not read again (the point of the index at tens of thousands
// of claims), one whose stat changed is, and an unreadable one always is.
func TestIndexReadsAFileAgainOnlyWhenItsStatChanged(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	orig := fixtureBytes(t, "canonical.json")
	item := func(n string) lockrec.Key {
		return lockrec.Key{Remote: "prgs", Org: "Scaled-Tech-Consulting", Repo: "Gitea-Tools", Issue: mustAtoi(t, n)}
	}
	renumbered := func(from, to string) []byte {
		b := bytes.ReplaceAll(orig, []byte(`"issue_number": `+from), []byte(`"issue_number": `+to))
		if bytes.Equal(b, orig) && from != to {
			t.Fatal("fixture has no issue_number " + from)
		}
		return b
	}
	const name = "their-tool.json" // not steward's name for any item: only the record says which
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, renumbered("658", "657"), 0o644); err != nil {
		t.Fatal(err)
	}
	x := NewIndex(dir)
	if es, err := x.Lookup(item("657")); err != nil || len(es) != 1 {
		t.Fatalf("lookup 657: %d entries, %v", len(es), err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	// Rewritten in place to name 656: same inode, same size, the old mtime put back.
	rewrite := func(data []byte) {
		t.Helper()
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteAt(data, 0); err != nil {
			t.Fatal(err)
		}
		f.Close()
		if err := os.Chtimes(path, fi.ModTime(), fi.ModTime()); err != nil {
			t.Fatal(err)
		}
	}
	rewrite(renumbered("658", "656"))
	if es, _ := x.Lookup(item("656")); len(es) != 0 {
		t.Fatalf("a file whose stat did not change was read again: %d entries for 656", len(es))
	}
	// A changed mtime is read again.
	if err := os.Chtimes(path, fi.ModTime(), fi.ModTime().Add(1)); err != nil {
		t.Fatal(err)
	}
	if es, _ := x.Lookup(item("656")); len(es) != 1 {
		t.Fatalf("a file whose mtime changed was not read again: %d entries for 656", len(es))
	}
	// An unreadable file is read again even when its stat did not change.
	bad := append([]byte("{"), bytes.Repeat([]byte(" "), len(orig)-1)...)
	rewrite(bad)
	if err := os.Chtimes(path, fi.ModTime(), fi.ModTime().Add(2)); err != nil {
		t.Fatal(err)
	}
	if es, _ := x.Lookup(item("656")); len(es) != 0 {
		t.Fatalf("the unreadable file still counts for 656: %d entries", len(es))
	}
	rewrite(renumbered("658", "655"))
	if err := os.Chtimes(path, fi.ModTime(), fi.ModTime().Add(2)); err != nil {
		t.Fatal(err)
	}
	if es, _ := x.Lookup(item("655")); len(es) != 1 {
		t.Fatalf("a file unreadable when last read was not read again: %d entries for 655", len(es))
	}
}

func mustAtoi(t *testing.T, s string) int64 {
	t.Helper()
	var n int64
	for _, c := range s {
		if c < '0' || c > '9' {
			t.Fatalf("%q is not a number", s)
		}
		n = n*10 + int64(c-'0')
	}
	return n
}
