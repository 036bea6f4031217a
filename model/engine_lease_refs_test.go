package model

import (
	"slices"
	"testing"
	"time"

	"steward/leases/leaserec"
)

// TestLeaseLeavingTheReadSetIsLookedUpWhileALockNamesIt: a lease row that leaves the read
// set (ended and aged out of the DB read) is to be read back by id while a lock still
// names it, and is not when no lock does; a lease row that merely changes asks for no
// lookup.
func TestLeaseLeavingTheReadSetIsLookedUpWhileALockNamesIt(t *testing.T) {
	for _, tc := range []struct {
		name    string
		lockFor string // the lease the lock on the item names ("": none)
		gone    bool   // the lease row leaves the read set (else it is rewritten)
		want    []string
	}{
		{"a lock names it, the row leaves", "L1", true, []string{"L1"}},
		{"a lock names it, the row changes", "L1", false, nil},
		{"no lock names it, the row leaves", "", true, nil},
		{"a lock names another lease, the row leaves", "L2", true, []string{"L2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := NewEngine(Config{})
			e.SetHealth(SourceLocks, okH())
			l1 := lease("L1", 7, "s1", leaserec.StatusActive, time.Hour, LivenessAlive)
			e.SetLease("L1", &l1)
			lo := lock("a.json", 7, "s1", tc.lockFor, time.Hour, LivenessAlive)
			e.SetLock("a.json", &lo)
			if tc.gone {
				e.SetLease("L1", nil)
			} else {
				again := mutLease(l1, func(l *LeaseObs) { l.Lease.Phase = "reviewing" })
				e.SetLease("L1", &again)
			}
			// Stats counts the ids waiting to be looked up before PendingRefs drops those
			// no longer needed.
			if got := e.Stats().RefPending; got != len(tc.want) {
				t.Errorf("%d lease ids waiting to be looked up, want %d", got, len(tc.want))
			}
			got := e.PendingRefs()
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("pending %q, want %q", got, tc.want)
			}
		})
	}
}
