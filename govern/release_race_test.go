package govern

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

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
