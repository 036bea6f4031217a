package locks

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// TestListIsLoadDirsLiveSet: List names exactly the files LoadDir reads as lock files,
// whatever their type, and nothing else.
func TestListIsLoadDirsLiveSet(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	canon := fixtureBytes(t, "canonical.json")
	for _, n := range []string{"a.json", "session-abc.json", "session-42.json", ".tmp-a.json", "notes.txt", "broken.json"} {
		writeFile(t, filepath.Join(dir, n), canon)
	}
	if err := os.Mkdir(filepath.Join(dir, "d.json"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, retiredDir), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a.json", filepath.Join(dir, "link.json")); err != nil {
		t.Fatal(err)
	}
	ls, err := List(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range ls {
		got = append(got, l.Name)
	}
	snap, err := LoadDir(dir, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, e := range snap.Live {
		want = append(want, e.Name)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) || len(got) != 6 {
		t.Fatalf("List %v, LoadDir's lock files %v (want 6: a, broken, d, fifo, link, session-abc)", got, want)
	}
	if _, err := List(filepath.Join(dir, "nope")); err == nil {
		t.Fatal("listing a missing directory succeeded")
	}
}

// TestListedUnchanged: a listed name is unchanged only while it is the regular file that
// was read — same inode, size and modification time — whether it is looked at by
// Unchanged or beforehand by Stat.
func TestListedUnchanged(t *testing.T) {
	t.Parallel()
	canon := fixtureBytes(t, "canonical.json")
	cases := []struct {
		name      string
		change    func(t *testing.T, path string)
		want      bool
		listFirst bool // list before the change (a file removed after the listing)
	}{
		{"untouched", func(*testing.T, string) {}, true, false},
		{"renamed over, same bytes and time", func(t *testing.T, path string) {
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			tmp := filepath.Join(filepath.Dir(path), ".tmp")
			writeFile(t, tmp, canon)
			if err := os.Chtimes(tmp, fi.ModTime(), fi.ModTime()); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(tmp, path); err != nil {
				t.Fatal(err)
			}
		}, false, false},
		{"rewritten in place, longer", func(t *testing.T, path string) {
			writeFile(t, path, append(canon, ' '))
		}, false, false},
		{"same size, new time", func(t *testing.T, path string) {
			later := time.Now().Add(time.Hour)
			if err := os.Chtimes(path, later, later); err != nil {
				t.Fatal(err)
			}
		}, false, false},
		{"replaced by a directory", func(t *testing.T, path string) {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(path, 0o700); err != nil {
				t.Fatal(err)
			}
		}, false, false},
		{"removed after the listing", func(t *testing.T, path string) {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
		}, false, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := filepath.Join(dir, "a.json")
			writeFile(t, path, canon)
			e := ReadFile(dir, "a.json")
			var ls []Listed
			var err error
			if tc.listFirst {
				ls, err = List(dir)
			}
			tc.change(t, path)
			if !tc.listFirst {
				ls, err = List(dir)
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(ls) != 1 || ls[0].Name != "a.json" {
				t.Fatalf("listed %v", ls)
			}
			if got := ls[0].Unchanged(e); got != tc.want {
				t.Fatalf("Unchanged = %v, want %v", got, tc.want)
			}
			if !tc.listFirst {
				// Stat looks at the file once, and Unchanged then answers what it saw.
				st := ls[0]
				st.Stat()
				if got := st.Unchanged(e); got != tc.want {
					t.Fatalf("after Stat, Unchanged = %v, want %v", got, tc.want)
				}
				// What Stat saw is kept: a change after it is not looked at again (the
				// next listing sees it).
				if fi, err := os.Lstat(path); err == nil && fi.Mode().IsRegular() {
					writeFile(t, path, append(canon, '\n', '\n'))
					if got := st.Unchanged(e); got != tc.want {
						t.Fatalf("Unchanged after a change that followed Stat = %v, want what Stat saw (%v)", got, tc.want)
					}
				}
			}
		})
	}
}

// TestReadListedIsReadFile: reading the listed names together, on every core, gives for
// each name the entry ReadFile gives — a canonical lock, a broken one, a directory, a FIFO,
// a link inside and one leaving the directory, a file removed after the listing — in
// listing order, and enough of them to use more than one goroutine.
func TestReadListedIsReadFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	canon := fixtureBytes(t, "canonical.json")
	for i := range 3 * parallelMin {
		writeFile(t, filepath.Join(dir, "n"+strconv.Itoa(i)+".json"), canon)
	}
	writeFile(t, filepath.Join(dir, "broken.json"), []byte(`{"remote":`))
	writeFile(t, filepath.Join(dir, "gone.json"), canon)
	if err := os.Mkdir(filepath.Join(dir, "d.json"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("n1.json", filepath.Join(dir, "link.json")); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "x.json")
	writeFile(t, outside, canon)
	if err := os.Symlink(outside, filepath.Join(dir, "out.json")); err != nil {
		t.Fatal(err)
	}
	ls, err := List(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "gone.json")); err != nil {
		t.Fatal(err)
	}
	got := ReadListed(dir, ls)
	if len(got) != len(ls) {
		t.Fatalf("%d entries for %d names", len(got), len(ls))
	}
	for i, l := range ls {
		want := ReadFile(dir, l.Name)
		if !reflect.DeepEqual(got[i], want) {
			t.Errorf("%s:\n ReadListed %+v\n ReadFile   %+v", l.Name, got[i], want)
		}
	}
}
