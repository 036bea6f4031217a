package live

import (
	"testing"
	"time"

	"steward/leases"
	"steward/leases/leaserec"
	"steward/locks/lockrec"
	"steward/model"
)

// TestOtherHostIsNeverDead: a lease or lock whose owner is on another node is unknown and
// marked as on another host — this host's process table says nothing about it, even when
// a pid of the same number is dead here — while an owner on this node is probed as usual.
// The probe's own liveness function answers dead for every pid, so reading another
// host's pid here would show dead.
func TestOtherHostIsNeverDead(t *testing.T) {
	p := Probe{Host: "host-b", Liveness: func(int, string) leaserec.ProcessState { return leaserec.ProcessDead },
		Worktree: func(string, string) leases.WorktreeReport {
			return leases.WorktreeReport{State: leaserec.WorktreeUnknown}
		}}
	for _, tc := range []struct {
		host  string
		owner model.Liveness
		other bool
	}{
		{"host-a", model.LivenessUnknown, true},
		{"host-b", model.LivenessDead, false},
	} {
		lo := p.ObserveLease(leaserec.Lease{LeaseID: "L1", Status: leaserec.StatusActive, OwnerPID: 4242, OwnerHost: tc.host})
		if lo.Owner != tc.owner || lo.OtherHost != tc.other || lo.Host != tc.host {
			t.Errorf("lease on %s: owner %s, other host %v (%s)", tc.host, lo.Owner, lo.OtherHost, lo.OwnerWhy)
		}
		pid := int64(4242)
		rec := lockrec.Record{LeaseID: "L1", PID: &pid, Extra: []lockrec.RawField{{Key: "host", Value: []byte(`"` + tc.host + `"`)}}}
		lk := p.ObserveLock(lockrec.Entry{Name: "x.json", Record: rec}, time.Now())
		if lk.Owner != tc.owner || lk.OtherHost != tc.other {
			t.Errorf("lock on %s: owner %s, other host %v (%s)", tc.host, lk.Owner, lk.OtherHost, lk.OwnerWhy)
		}
	}
}
