package govern

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"steward/govern/actionid"
	"steward/leases"
	"steward/locks"
	"steward/locks/lockrec"
)

// A release whose lock archive fails is complete when the lock is no longer the released
// lease's — gone, or claimed again by another lease — and unknown otherwise.
func TestLockNoLongerOurs(t *testing.T) {
	n := int64(7)
	rec := func(lease string) lockrec.Record {
		return lockrec.Record{Remote: "origin", Org: "acme", Repo: "widgets", IssueNumber: &n, LeaseID: lease}
	}
	st := workerState{Fence: leases.Fence{LeaseID: "L-ours"}, Lock: "acme__widgets__7.json", HasLock: true}
	for _, tc := range []struct {
		name  string
		setup func(dir string)
		err   error
		done  bool
	}{
		{"claimed again by another lease", func(dir string) { write(t, dir, st.Lock, rec("L-new")) }, locks.ErrFenceMoved, true},
		{"archived by someone else", func(string) {}, locks.ErrNotFound, true},
		{"gone after a fence move", func(string) {}, locks.ErrFenceMoved, true},
		{"still names the released lease", func(dir string) { write(t, dir, st.Lock, rec("L-ours")) }, locks.ErrFenceMoved, false},
		{"names no lease", func(dir string) { write(t, dir, st.Lock, rec("")) }, locks.ErrFenceMoved, false},
		{"unreadable", func(dir string) {
			if err := os.WriteFile(filepath.Join(dir, st.Lock), []byte("{not json"), 0o600); err != nil {
				t.Fatal(err)
			}
		}, locks.ErrFenceMoved, false},
		{"an IO error, whatever the file says", func(dir string) { write(t, dir, st.Lock, rec("L-new")) }, errors.New("disk gone"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			tc.setup(dir)
			note, done := lockNoLongerOurs(dir, st, tc.err)
			if done != tc.done || (done && note == "") {
				t.Fatalf("done %v (%q), want %v", done, note, tc.done)
			}
		})
	}
}

func write(t *testing.T, dir, name string, r lockrec.Record) {
	t.Helper()
	if _, err := locks.WriteCAS(dir, name, locks.ExpectAbsent(), r); err != nil {
		t.Fatal(err)
	}
}

// TestReleaseSaysWhichArchiveItCouldNotRemove: while a release archives the lock, the item
// is claimed again (the lock rewritten in place to name another lease) and the archive just
// written cannot be removed (a non-empty directory takes its place: no permission stops
// root's unlink). The release succeeds — the lease is released, the lock is another claim's
// — and its effects name the archive left in retired/ as well as the lock left in place.
func TestReleaseSaysWhichArchiveItCouldNotRemove(t *testing.T) {
	f := newFixture(t, RoleOperator)
	id := f.claim("s1", 8).Detail["lease_id"]
	name, _ := locks.Name(lockKey(work(8)))
	path := filepath.Join(f.ws.LocksDir, name)
	rdir := filepath.Join(f.ws.LocksDir, "retired")
	var left string
	c := New(f.ws, f.audit, Options{Actor: f.core.actor, Now: f.clock.Now, Step: func(step string) {
		if step != "lock-dir-synced" || left != "" {
			return
		}
		ents, err := os.ReadDir(rdir)
		if err != nil || len(ents) != 1 {
			t.Fatalf("retired/ holds %v (%v), want the archive alone", ents, err)
		}
		left = ents[0].Name()
		e := locks.ReadFile(f.ws.LocksDir, name)
		e.Record.LeaseID = "L-new"
		b, err := lockrec.Marshal(&e.Record)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(filepath.Join(rdir, left), filepath.Join(f.dir, "saved")); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(rdir, left, "x"), 0o700); err != nil {
			t.Fatal(err)
		}
	}})
	defer c.Close()
	_, out, err := c.Run(context.Background(), Request{Action: actionid.Release, Target: Target{LeaseID: id, Session: "s1"}}, "")
	if left == "" {
		t.Fatal("the archive's lock-dir-synced step was never reached")
	}
	if err != nil || out.Result != ResultSucceeded {
		t.Fatalf("release: %+v %v", out, err)
	}
	all := strings.Join(out.Effects, "\n")
	for _, want := range []string{"left in place: it now names lease L-new", "stays as retired/" + left} {
		if !strings.Contains(all, want) {
			t.Errorf("effects %q do not say %q", out.Effects, want)
		}
	}
	if e := locks.ReadFile(f.ws.LocksDir, name); e.Missing || e.Record.LeaseID != "L-new" {
		t.Errorf("the lock of the new claim was not kept: %+v", e.Record)
	}
}
