package model

import (
	"testing"
	"time"

	"steward/leases/leaserec"
)

// TestDeadlineHeapCompactedJustPastItsBound: the deadline heap keeps every entry pushed
// until it holds more than 2×units + sessions + 64, and is then compacted, in the same
// Tick, to one entry per pending deadline.
func TestDeadlineHeapCompactedJustPastItsBound(t *testing.T) {
	e := NewEngine(Config{})
	e.SetHealth(SourceLocks, okH())
	for i, n := range []int64{7, 8, 9} {
		lo := lock(string(rune('a'+i))+".json", n, "s1", "", time.Hour, LivenessAlive)
		e.SetLock(lo.Entry.Name, &lo)
	}
	for _, id := range []string{"sa", "sb"} {
		e.SetSession(id, &SessionObs{Session: leaserec.Session{SessionID: id, Status: "active",
			LastHeartbeatAt: leaserec.ParseTimestamp(leaserec.FormatTime(now))}})
	}
	e.Tick(now)
	pending := len(e.dl)
	bound := 2*len(e.units) + len(e.sessions) + 64
	if len(e.units) != 3 || len(e.sessions) != 2 || pending >= bound {
		t.Fatalf("%d units, %d sessions, %d deadlines", len(e.units), len(e.sessions), pending)
	}
	for want := pending + 1; want <= bound; want++ {
		e.sessionDirty("sa") // re-derived with the same deadline: one more entry
		if e.Tick(now); len(e.dl) != want {
			t.Fatalf("%d deadlines, want %d (bound %d)", len(e.dl), want, bound)
		}
	}
	e.sessionDirty("sa")
	if e.Tick(now); len(e.dl) != pending {
		t.Fatalf("past the bound %d: %d deadlines, want %d", bound, len(e.dl), pending)
	}
}
