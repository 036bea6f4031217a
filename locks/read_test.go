package locks

import (
	"bytes"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"steward/locks/lockrec"
)

func writeFile(t testing.TB, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

func fixtureBytes(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtureDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestReadFileUnreadable(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	canon := fixtureBytes(t, "canonical.json")
	big := append([]byte(`{"pad":"`), bytes.Repeat([]byte("x"), MaxFileSize)...)
	big = append(big, `"}`...)
	writeFile(t, filepath.Join(dir, "big.json"), big)
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "x.json"), 0o700); err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Symlink("/etc/passwd", filepath.Join(dir, "passwd.json")))
	must(os.Symlink("loop-b.json", filepath.Join(dir, "loop-a.json")))
	must(os.Symlink("loop-a.json", filepath.Join(dir, "loop-b.json")))
	must(os.Symlink("gone.json", filepath.Join(dir, "dangling.json")))
	must(os.Symlink("x.json", filepath.Join(dir, "to-dir.json")))
	writeFile(t, filepath.Join(dir, "real.json"), canon)
	must(os.Symlink("real.json", filepath.Join(dir, "inside.json")))
	outside := t.TempDir()
	writeFile(t, filepath.Join(outside, "o.json"), canon)
	must(os.Symlink(filepath.Join(outside, "o.json"), filepath.Join(dir, "outside.json")))
	must(os.Symlink("../"+filepath.Base(dir)+"/../"+filepath.Base(dir)+"/real.json", filepath.Join(dir, "dotdot-inside.json")))
	writeFile(t, filepath.Join(dir, "utf8.json"), []byte("{\"remote\":\"\xc3\x28\"}"))
	writeFile(t, filepath.Join(dir, "nul.json"), []byte("{\"remote\":\"a\"}\x00"))
	writeFile(t, filepath.Join(dir, "empty.json"), nil)
	writeFile(t, filepath.Join(dir, "trunc.json"), canon[:len(canon)/2])
	writeFile(t, filepath.Join(dir, "syntax.json"), []byte(`{"a" 1}`))
	writeFile(t, filepath.Join(dir, "array.json"), []byte(`[]`))
	writeFile(t, filepath.Join(dir, "noperm.json"), canon)
	must(os.Chmod(filepath.Join(dir, "noperm.json"), 0))

	cases := []struct {
		name string
		want lockrec.UnreadableReason
	}{
		{"big.json", lockrec.UnreadableTooLarge},
		{"fifo.json", lockrec.UnreadableNotRegular},
		{"x.json", lockrec.UnreadableNotRegular},
		{"to-dir.json", lockrec.UnreadableNotRegular},
		{"passwd.json", lockrec.UnreadableSymlinkEscapes},
		{"outside.json", lockrec.UnreadableSymlinkEscapes},
		{"loop-a.json", lockrec.UnreadableSymlinkLoop},
		{"dangling.json", lockrec.UnreadableDangling},
		{"utf8.json", lockrec.UnreadableInvalidUTF8},
		{"nul.json", lockrec.UnreadableNUL},
		{"empty.json", lockrec.UnreadableEmpty},
		{"trunc.json", lockrec.UnreadableTruncated},
		{"syntax.json", lockrec.UnreadableSyntax},
		{"array.json", lockrec.UnreadableNotObject},
		{"inside.json", ""},
		{"dotdot-inside.json", ""},
		{"real.json", ""},
	}
	if os.Geteuid() != 0 { // root reads mode-0 files
		cases = append(cases, struct {
			name string
			want lockrec.UnreadableReason
		}{"noperm.json", lockrec.UnreadablePermission})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			done := make(chan lockrec.Entry, 1)
			go func() { done <- ReadFile(dir, c.name) }()
			var e lockrec.Entry
			select {
			case e = <-done:
			case <-time.After(10 * time.Second): // a FIFO open that blocks would hang here
				t.Fatal("ReadFile blocked")
			}
			var got lockrec.UnreadableReason
			if e.Unreadable != nil {
				got = e.Unreadable.Reason
			}
			if got != c.want {
				t.Fatalf("reason %q (%+v), want %q", got, e.Unreadable, c.want)
			}
			if got != "" && e.Unreadable.Detail == "" {
				t.Error("unreadable without detail")
			}
			if c.want == "" && (!e.HasKey || lockrec.Assess(&e.Record, fixtureNow).Contract != lockrec.ContractCanonical) {
				t.Errorf("readable file not decoded: %+v", e.Findings)
			}
		})
	}
	t.Run("missing", func(t *testing.T) {
		t.Parallel()
		if e := ReadFile(dir, "nope.json"); !e.Missing {
			t.Errorf("%+v", e)
		}
	})
	t.Run("name with separator", func(t *testing.T) {
		t.Parallel()
		if e := ReadFile(dir, "../etc/passwd"); e.Unreadable == nil || e.HasKey {
			t.Errorf("%+v", e)
		}
	})
	t.Run("stat fields", func(t *testing.T) {
		t.Parallel()
		e := ReadFile(dir, "real.json")
		if e.Size != int64(len(canon)) || e.Inode == 0 || e.ModTime.IsZero() {
			t.Errorf("size %d inode %d mtime %v", e.Size, e.Inode, e.ModTime)
		}
	})
}
