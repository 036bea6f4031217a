package leases_test

import (
	"strings"
	"testing"
	"time"

	"steward/leases"
	"steward/leases/leaserec"
)

// guardLease is an active lease of session s1, created at now, expiring at exp.
func guardLease(exp time.Time, gen int64, hasGen bool) *leaserec.Lease {
	return &leaserec.Lease{LeaseID: "lease-1", SessionID: "s1", Status: leaserec.StatusActive,
		TaskClass: leaserec.ClassAuthorIssueWork, CreatedAt: leaserec.ParseTimestamp(leaserec.FormatTime(now)),
		ExpiresAt: leaserec.ParseTimestamp(leaserec.FormatTime(exp)), Generation: gen, HasGeneration: hasGen}
}

// TestFenceMovedNamesTheGeneration: a transition whose fence no longer holds is refused
// fence_moved, naming what the lease is now; the lease_generation_id is named when the row
// records one or the caller fenced on one — and only then, so a DB without the column is
// not told of a generation 0 nobody read.
func TestFenceMovedNamesTheGeneration(t *testing.T) {
	t.Parallel()
	exp := now.Add(time.Hour)
	for _, c := range []struct {
		name    string
		lease   *leaserec.Lease
		fence   leases.Fence
		names   string // "" when the message must not name a generation
		without string
	}{
		{"another holder, no generation recorded", guardLease(exp, 0, false),
			leases.Fence{LeaseID: "lease-1", SessionID: "s2"}, "", "lease_generation_id"},
		{"another holder, generation recorded", guardLease(exp, 4, true),
			leases.Fence{LeaseID: "lease-1", SessionID: "s2", Generation: 4}, "lease_generation_id 4, fenced on 4", ""},
		{"an older generation", guardLease(exp, 7, true),
			leases.Fence{LeaseID: "lease-1", SessionID: "s1", Generation: 6}, "lease_generation_id 7, fenced on 6", ""},
		{"fenced on a generation the row does not record", guardLease(exp, 0, false),
			leases.Fence{LeaseID: "lease-1", SessionID: "s1", Generation: 3}, "lease_generation_id 0, fenced on 3", ""},
	} {
		v := leases.CheckRelease(c.lease, c.fence)
		if v.OK || v.Code != leases.CodeFenceMoved {
			t.Errorf("%s: %+v, want fence_moved", c.name, v)
			continue
		}
		if c.names != "" && !strings.Contains(v.Message, c.names) {
			t.Errorf("%s: %q does not name %q", c.name, v.Message, c.names)
		}
		if c.without != "" && strings.Contains(v.Message, c.without) {
			t.Errorf("%s: %q names %q", c.name, v.Message, c.without)
		}
	}
}

// TestAbandonOfALeaseNotStaleSaysWhatToDo: abandon takes only a stale lease; refusing one
// past its expiry it points to reclaim, refusing a live one it says the lease is never
// stolen.
func TestAbandonOfALeaseNotStaleSaysWhatToDo(t *testing.T) {
	t.Parallel()
	p := leaserec.DefaultPolicy(leaserec.ClassAuthorIssueWork)
	for _, c := range []struct {
		name      string
		exp       time.Time
		says, not string
	}{
		{"past its expiry", now.Add(-time.Minute), "reclaim it instead", "never stolen"},
		{"live", now.Add(time.Hour), "never stolen", "reclaim"},
	} {
		l := guardLease(c.exp, 0, false)
		v, _ := leases.CheckAbandon(l, leases.FenceOf(*l), p, leaserec.Evidence{}, now)
		if v.OK || v.Code != leases.CodeNotStale || !strings.Contains(v.Message, c.says) || strings.Contains(v.Message, c.not) {
			t.Errorf("abandon of a lease %s: %+v, want not_stale saying %q", c.name, v, c.says)
		}
	}
}
