package model

import (
	"testing"
	"time"

	"steward/leases/leaserec"
)

// TestNextIsTheEarliestPendingDeadline: Next is the earliest instant at which a derivation
// changes, and zero when none is pending — nothing derived yet, or the only deadline's lock
// gone since.
func TestNextIsTheEarliestPendingDeadline(t *testing.T) {
	a := lock("a.json", 7, "s1", "", 10*time.Minute, LivenessAlive)
	for _, tc := range []struct {
		name  string
		setup func(e *Engine)
		want  time.Time
	}{
		{"nothing derived", func(*Engine) {}, time.Time{}},
		{"a lock expiring in ten minutes", func(e *Engine) { e.SetLock("a.json", &a) }, now.Add(10 * time.Minute)},
		{"a lock expiring in ten minutes, removed since", func(e *Engine) {
			e.SetLock("a.json", &a)
			e.Flush(now)
			e.SetLock("a.json", nil)
		}, time.Time{}},
		{"a session heartbeating a minute ago", func(e *Engine) {
			s := sess("s1", "active")
			e.SetSession("s1", &s)
		}, now.Add(-time.Minute + leaserec.SessionHeartbeatStale)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := NewEngine(Config{})
			e.SetHealth(SourceLocks, okH())
			tc.setup(e)
			e.Flush(now)
			if got := e.Next(); !got.Equal(tc.want) {
				t.Errorf("next deadline %v, want %v", got, tc.want)
			}
		})
	}
}
