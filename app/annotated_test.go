package app_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"steward/app"
	"steward/govern"
	"steward/model"
)

// TestWatchAnnotatesAsAFreshRead: the live feed previews its orphans' actions in the view
// of the lock directory its live model keeps (not a listing and lstat of every file per
// snapshot), and each annotation — allowed, or the refusal — is the one a fresh one-shot
// read gives: on the test workspace, and after a live lock of each orphan's item appears
// under a foreign name and in another spelling.
func TestWatchAnnotatesAsAFreshRead(t *testing.T) {
	src := "../testdata/workspace"
	root := t.TempDir()
	locksDir := filepath.Join(root, "locks")
	if err := os.MkdirAll(locksDir, 0o700); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(filepath.Join(src, "locks"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, "locks", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(locksDir, e.Name()), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(filepath.Join(src, "control_plane.sqlite3"))
	if err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(root, "control_plane.sqlite3")
	if err := os.WriteFile(db, b, 0o600); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 7, 23, 10, 5, 0, 0, time.UTC)
	open := func() *app.Session {
		s := app.Settings{LocksDir: locksDir, DBPath: db, RepoRoot: filepath.Join(src, "repo"),
			Now: func() time.Time { return now }, Audit: app.AuditNone, Role: govern.RoleViewer,
			Env: func(string) (string, bool) { return "", false }}
		s.Gitea.Off = true
		sess, err := app.Open(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { sess.Close() })
		return sess
	}
	annotations := func(s *model.Snapshot) map[string]string {
		out := map[string]string{}
		for _, o := range s.Orphans {
			if o.Action == nil {
				continue
			}
			v := "no verdict"
			if o.Action.Allowed != nil {
				v = fmt.Sprint("allowed ", *o.Action.Allowed)
			}
			if o.Action.Refusal != nil {
				v += " " + o.Action.Refusal.Code + ": " + o.Action.Refusal.Message
			}
			out[string(o.Kind)+" "+o.Action.ID+" "+o.Action.Target.LeaseID+" "+o.Action.Target.LockFile] = v
		}
		return out
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	watched := open()
	if err := watched.Watch(ctx); err != nil {
		t.Fatal(err)
	}
	// next waits for the feed's snapshot that ok accepts.
	next := func(what string, ok func(*model.Snapshot) bool) *model.Snapshot {
		t.Helper()
		deadline := time.After(20 * time.Second)
		for {
			select {
			case s := <-watched.Snapshots():
				if ok(s) {
					return s
				}
			case <-deadline:
				c := watched.Live.Current()
				var fs []string
				for _, x := range c.Claims {
					fs = append(fs, x.LockFile)
				}
				t.Fatalf("timed out waiting for %s; claims %v, findings %v", what, fs, c.Findings)
			}
		}
	}
	compare := func(step string, s *model.Snapshot) {
		t.Helper()
		got, want := annotations(s), annotations(open().Snapshot(context.Background()))
		if len(want) == 0 {
			t.Fatalf("%s: the workspace has no orphan with an action to compare", step)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: the live feed's annotations differ from a fresh read's:\nlive  %v\nfresh %v", step, got, want)
		}
	}
	first := next("the first snapshot", func(s *model.Snapshot) bool { return len(s.Orphans) > 0 })
	compare("first", first)

	// Every orphan's item gains a live lock under a foreign name, spelled in upper case.
	added := map[string]bool{}
	for _, o := range first.Orphans {
		if o.Item == nil || o.Action == nil {
			continue
		}
		rec := fmt.Sprintf(`{"remote":%q,"org":%q,"repo":%q,"issue_number":%d,"owner_session":"other-%d",`+
			`"lease_id":"foreign-%d"}`, o.Item.Remote, strings.ToUpper(o.Item.Org), strings.ToUpper(o.Item.Repo),
			o.Item.Number, o.Item.Number, o.Item.Number)
		name := fmt.Sprintf("worker-foreign-%d.json", o.Item.Number)
		if err := os.WriteFile(filepath.Join(locksDir, name), []byte(rec), 0o600); err != nil {
			t.Fatal(err)
		}
		added[name] = true
	}
	if len(added) == 0 {
		t.Fatal("no orphan names an item")
	}
	s := next("the foreign locks", func(s *model.Snapshot) bool {
		n := 0
		for _, c := range s.Claims {
			if strings.HasPrefix(c.LockFile, "worker-foreign-") {
				n++
			}
		}
		return n == len(added)
	})
	compare("after the foreign locks", s)
}
