package notify

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"steward/attention"
	"steward/model"
)

// The test binary doubles as the notify command: re-executed with NOTIFY_TEST_AS set it
// records its argv and environment, fails, or hangs.
func TestMain(m *testing.M) {
	switch os.Getenv("NOTIFY_TEST_AS") {
	case "record":
		b := fmt.Sprintf("args=%q\ntitle=%s\nitem=%s\n", os.Args[1:], os.Getenv("STEWARD_TITLE"), os.Getenv("STEWARD_ITEM"))
		if err := os.WriteFile(os.Getenv("NOTIFY_TEST_OUT"), []byte(b), 0o600); err != nil {
			os.Exit(9)
		}
		os.Exit(0)
	case "fail":
		fmt.Fprint(os.Stderr, "ntfy: 403 forbidden \x1b[31mred\x1b[0m\n")
		os.Exit(3)
	case "hang":
		// A command that never ends on its own. Not select{}: with no other goroutine left
		// the runtime calls that a deadlock and exits 2, and the timeout is never reached.
		time.Sleep(24 * time.Hour)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// hostile is an item title written to become shell code, argv, or terminal control.
const hostile = `Fix "it"; touch PWNED1 $(touch PWNED2) ` + "`touch PWNED3`" + ` | rm -rf / && echo ok > PWNED4 '$HOME' *` + "\x1b]0;title\x07"

func event(title string) attention.Event {
	return attention.Event{Type: attention.EventEntered, Notify: true, Entry: attention.Entry{Key: "clarification:acme/w#1",
		Kind: attention.KindClarification, Need: model.NeedHuman, Item: "acme/w#1", Title: title, SLA: time.Hour}}
}

func self(t *testing.T) string {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

func noPwned(t *testing.T, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		m, _ := filepath.Glob(filepath.Join(d, "PWNED*"))
		if len(m) > 0 {
			t.Fatalf("the item text ran as shell code: %v", m)
		}
	}
}

// TestHostileTextIsNeverInterpreted: the command runs with its configured arguments only —
// the event's text is in the environment, whole, and no shell ever reads it as code.
func TestHostileTextIsNeverInterpreted(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	out := filepath.Join(dir, "out")
	c := Command{Argv: []string{self(t), "--topic", "fleet"}, Environ: []string{"NOTIFY_TEST_AS=record", "NOTIFY_TEST_OUT=" + out}}
	if r := c.Run(context.Background(), event(hostile)); r.Err != nil {
		t.Fatal(r.Err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("args=%q\ntitle=%s\nitem=acme/w#1\n", []string{"--topic", "fleet"}, strings.TrimSuffix(hostile, "\x1b]0;title\x07"))
	if string(b) != want {
		t.Fatalf("the command saw\n%s\nwant\n%s", b, want)
	}
	noPwned(t, dir)

	// A person who reads the fields with a shell of their own is safe too: a variable's
	// value is not code.
	sh := Command{Argv: []string{"/bin/sh", "-c", `printf '%s' "$STEWARD_TITLE" > "$OUT"`}, Environ: []string{"OUT=" + out, "PATH=/usr/bin:/bin"}}
	if r := sh.Run(context.Background(), event(hostile)); r.Err != nil {
		t.Fatal(r.Err)
	}
	if b, _ := os.ReadFile(out); string(b) != strings.TrimSuffix(hostile, "\x1b]0;title\x07") {
		t.Fatalf("through sh the title reads %q", b)
	}
	noPwned(t, dir)
}

func TestCommandFailureIsReported(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    Command
		want []string
		is   error
	}{
		{name: "exit status with stderr, made safe", c: Command{Argv: []string{self(t)}, Environ: []string{"NOTIFY_TEST_AS=fail"}},
			want: []string{"failed", "exit status 3", "ntfy: 403 forbidden red"}},
		{name: "not found", c: Command{Argv: []string{"/nonexistent/steward-notify"}}, want: []string{"/nonexistent/steward-notify", "no such file"}},
		{name: "empty", c: Command{}, want: []string{"notify.command is empty"}},
		{name: "timeout kills it", c: Command{Argv: []string{self(t)}, Environ: []string{"NOTIFY_TEST_AS=hang"}, Timeout: 200 * time.Millisecond},
			want: []string{"timed out after 200ms"}, is: errTimeout},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.c.Run(context.Background(), event("q"))
			if r.Err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(r.Err.Error(), w) {
					t.Errorf("error %q lacks %q", r.Err, w)
				}
			}
			if strings.ContainsRune(r.Err.Error(), 0x1b) {
				t.Errorf("a control sequence in the error: %q", r.Err)
			}
			if tc.is != nil && !errors.Is(r.Err, tc.is) {
				t.Errorf("error %v is not %v", r.Err, tc.is)
			}
		})
	}
}

func TestScrubDropsSecrets(t *testing.T) {
	got := scrub([]string{"PATH=/bin", "STEWARD_GITEA_TOKEN=x", "GITEA_TOKEN=y", "PGPASSWORD=z", "MY_SECRET=w", "HOME=/root"})
	if strings.Join(got, " ") != "PATH=/bin HOME=/root" {
		t.Fatalf("Scrub = %v", got)
	}
}
