package locks

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestSessionPointerTarget: a session pointer's target is the first string field among
// the names a pointer may use, in their order of preference, whatever other fields come
// before it in the file.
func TestSessionPointerTarget(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, body, want string }{
		{"lock_path alone", `{"lock_path": "/l/a.json", "pid": 1}`, "/l/a.json"},
		{"another string field first", `{"note": "hello", "lock_path": "/l/a.json"}`, "/l/a.json"},
		{"preferred name later in the file", `{"path": "/l/p.json", "lock_file": "/l/f.json"}`, "/l/f.json"},
		{"an empty string is skipped", `{"lock_path": "", "lock": "/l/k.json"}`, "/l/k.json"},
		{"a non-string value is skipped", `{"lock_path": 7, "issue_lock_path": "/l/i.json"}`, "/l/i.json"},
		{"no target", `{"note": "hello", "pid": 3}`, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			writeFile(t, filepath.Join(dir, "session-31.json"), []byte(c.body))
			e := ReadFile(dir, "session-31.json")
			if e.Pointer == nil || e.Pointer.PID != 31 || e.Pointer.Target != c.want {
				t.Fatalf("pointer %+v, want pid 31 and target %q", e.Pointer, c.want)
			}
		})
	}
}

// TestReadThroughALinkedDirectory: a locks directory reached through a symbolic link
// (~/locks -> /data/locks) judges where a linked lock file leads by the directory's real
// path: a link to a file beside it is inside, not an escape.
func TestReadThroughALinkedDirectory(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	real := filepath.Join(base, "real")
	if err := os.Mkdir(real, 0o700); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(base, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(real, "a.json"), fixtureBytes(t, "canonical.json"))
	if err := os.Symlink("a.json", filepath.Join(real, "b.json")); err != nil {
		t.Fatal(err)
	}
	if e := ReadFile(link, "b.json"); e.Unreadable != nil || !e.HasKey {
		t.Fatalf("ReadFile through the linked directory: %+v", e.Unreadable)
	}
	s, err := LoadDir(link, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range s.Live {
		if e.Unreadable != nil {
			t.Errorf("LoadDir through the linked directory: %s %+v", e.Name, e.Unreadable)
		}
	}
	if len(s.Live) != 2 {
		t.Errorf("%d live entries, want a.json and b.json", len(s.Live))
	}
}

// TestReadRegularAtTheLimitWithAFullBuffer: a file of exactly MaxFileSize bytes is read
// whole even when the pooled buffer's capacity is exactly that size (it fills the buffer,
// and only the next read, of nothing, ends the file).
func TestReadRegularAtTheLimitWithAFullBuffer(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "a.json")
	writeFile(t, path, bytes.Repeat([]byte("x"), MaxFileSize))
	for _, c := range []int{0, 16 << 10, MaxFileSize - 1, MaxFileSize, MaxFileSize + 1} {
		buf := make([]byte, 0, c)
		got, info, err := readRegular(path, &buf)
		if err != nil || len(got) != MaxFileSize || info.size != MaxFileSize {
			t.Errorf("buffer of capacity %d: %d bytes, size %d, %v", c, len(got), info.size, err)
		}
	}
}
