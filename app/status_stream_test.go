package app_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"steward/app"
	"steward/govern"
	"steward/model/live"
)

// TestStatusJSONStreamedIsTheWhole: `steward status --json` read a page of items at a time
// (Session.StatusJSON) writes the bytes of the snapshot built whole (Session.Snapshot,
// encoded), whatever the page size, on a workspace with contention (a duplicate live lock,
// refused claims), orphans, unreadable locks, sessions without leases, lock files whose
// record names another item than their name (carried to a later page, or to the last),
// a readable lock that names no item, one repository spelled two ways, and with a DB that
// cannot be read. Only the lock source's scan duration may differ. A record that names an
// item derived before it was read is not streamed (ok false): the whole is built instead.
func TestStatusJSONStreamedIsTheWhole(t *testing.T) {
	defer func(n int) { live.StreamPage = n }(live.StreamPage)
	src := "../testdata/workspace"
	lock := func(t *testing.T, dir, from, to string, edit func(string) string) {
		b, err := os.ReadFile(filepath.Join(src, "locks", from))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, to), []byte(edit(string(b))), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	same := func(s string) string { return s }
	number := func(n string) func(string) string {
		return func(s string) string { return strings.ReplaceAll(s, `"issue_number": 1,`, `"issue_number": `+n+`,`) }
	}
	workspace := func(t *testing.T, extra func(dir string)) (locksDir, db string) {
		root := t.TempDir()
		locksDir = filepath.Join(root, "locks")
		if err := os.MkdirAll(locksDir, 0o700); err != nil {
			t.Fatal(err)
		}
		ents, err := os.ReadDir(filepath.Join(src, "locks"))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			if !strings.HasPrefix(e.Name(), ".") {
				lock(t, locksDir, e.Name(), e.Name(), same)
			}
		}
		b, err := os.ReadFile(filepath.Join(src, "control_plane.sqlite3"))
		if err != nil {
			t.Fatal(err)
		}
		db = filepath.Join(root, "control_plane.sqlite3")
		if err := os.WriteFile(db, b, 0o600); err != nil {
			t.Fatal(err)
		}
		extra(locksDir)
		return locksDir, db
	}
	fleet := func(dir string) {
		// Item 1 again under its other spelling: a duplicate live lock of one item.
		lock(t, dir, "origin__acme__widgets__issue-1.json", "origin__ACME__Widgets__issue-1.json",
			func(s string) string { return strings.Replace(s, `"org": "acme"`, `"org": "ACME"`, 1) })
		// Named for item 5, its record names item 12, which a file of its own names too:
		// carried to item 12's page.
		lock(t, dir, "origin__acme__widgets__issue-1.json", "origin__acme__widgets__issue-5.json", number("12"))
		lock(t, dir, "origin__acme__widgets__issue-1.json", "origin__acme__widgets__issue-12.json", number("12"))
		// Named for item 7, its record names item 31, which nothing else names: the last page.
		lock(t, dir, "origin__acme__widgets__issue-1.json", "origin__acme__widgets__issue-7.json", number("31"))
		// A readable record that names no item.
		lock(t, dir, "origin__acme__widgets__issue-1.json", "origin__acme__widgets__issue-9.json",
			func(s string) string { return strings.Replace(s, `"issue_number": 1,`, ``, 1) })
		// A name that gives no item, and a file that is no lock record.
		lock(t, dir, "origin__acme__widgets__issue-2.json", "not-a-lock-name.json", same)
		if err := os.WriteFile(filepath.Join(dir, "origin__acme__widgets__issue-40.json"), []byte("{"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	scan := regexp.MustCompile(`"scan_duration_ns":[0-9]+`)
	now := time.Date(2026, 7, 23, 10, 5, 0, 0, time.UTC)
	compare := func(t *testing.T, locksDir, db string, wantStreamed bool, pages ...int) {
		for _, page := range pages {
			live.StreamPage = page
			s := app.Settings{LocksDir: locksDir, DBPath: db, RepoRoot: filepath.Join(src, "repo"),
				Now: func() time.Time { return now }, Audit: app.AuditNone, Role: govern.RoleViewer,
				Env: func(string) (string, bool) { return "", false }}
			s.Gitea.Off = true
			sess, err := app.Open(context.Background(), s)
			if err != nil {
				t.Fatal(err)
			}
			var streamed, whole bytes.Buffer
			sum, ok, err := sess.StatusJSON(context.Background(), &streamed, []string{"a note"})
			if err != nil || ok != wantStreamed {
				t.Fatalf("page %d: streamed %v (%v), want %v", page, ok, err, wantStreamed)
			}
			snap := sess.Snapshot(context.Background())
			sess.Close()
			if !ok {
				if streamed.Len() != 0 {
					t.Fatalf("page %d: not streamed, yet %d bytes written", page, streamed.Len())
				}
				continue
			}
			snap.Findings = append(snap.Findings, "a note")
			if err := snap.EncodeJSON(func(b []byte) error { whole.Write(b); return nil }); err != nil {
				t.Fatal(err)
			}
			whole.WriteByte('\n')
			a, b := scan.ReplaceAll(streamed.Bytes(), nil), scan.ReplaceAll(whole.Bytes(), nil)
			if !bytes.Equal(a, b) {
				t.Fatalf("page %d: the streamed output differs from the whole:\nstreamed %s\nwhole    %s", page, a, b)
			}
			if len(sum.Orphans) != len(snap.Orphans) || len(sum.Contention) != len(snap.Contention) ||
				sum.Sources.Locks.Status != snap.Sources.Locks.Status || sum.Sources.DB.Status != snap.Sources.DB.Status {
				t.Fatalf("page %d: the summary is not the snapshot's", page)
			}
		}
	}
	t.Run("fleet", func(t *testing.T) {
		locksDir, db := workspace(t, fleet)
		compare(t, locksDir, db, true, 1, 2, 3, 2048)
	})
	t.Run("db-unreadable", func(t *testing.T) {
		locksDir, db := workspace(t, fleet)
		if err := os.WriteFile(db, []byte("not a database"), 0o600); err != nil {
			t.Fatal(err)
		}
		compare(t, locksDir, db, true, 1, 2, 3, 2048)
	})
	t.Run("db-missing", func(t *testing.T) {
		locksDir, db := workspace(t, fleet)
		compare(t, locksDir, db+"-gone", true, 1, 2, 3, 2048)
	})
	t.Run("locks-unreadable", func(t *testing.T) {
		_, db := workspace(t, fleet)
		compare(t, filepath.Join(t.TempDir(), "no-such-dir"), db, true, 1, 2, 3, 2048)
	})
	t.Run("record-names-an-item-read-before", func(t *testing.T) {
		locksDir, db := workspace(t, func(dir string) {
			fleet(dir)
			lock(t, dir, "origin__acme__widgets__issue-1.json", "origin__acme__widgets__issue-50.json", number("2"))
		})
		compare(t, locksDir, db, false, 1)
		// In one page, the file is filed before its item is derived.
		compare(t, locksDir, db, true, 2048)
	})
}
