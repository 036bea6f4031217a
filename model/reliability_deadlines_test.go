package model

import (
	"testing"
	"time"

	"steward/leases/leaserec"
)

// TestDeadlineHeapStaysBounded: every re-derivation pushes a deadline and leaves the old
// one stale; the heap is compacted as it goes, not only on the periodic resync (the
// load run's long-running model held 1,404 entries where a fresh one held 117).
func TestDeadlineHeapStaysBounded(t *testing.T) {
	now := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	e := NewEngine(Config{})
	for i := range 10 {
		id := "s" + string(rune('a'+i))
		e.SetSession(id, &SessionObs{Session: leaserec.Session{SessionID: id, Status: "active",
			LastHeartbeatAt: leaserec.ParseTimestamp(leaserec.FormatTime(now))}})
	}
	e.Tick(now)
	most := 0
	for round := range 2000 {
		id := "s" + string(rune('a'+round%10))
		if round%3 == 0 { // a heartbeat moves the deadline
			so := *e.sessions[id]
			so.Session.LastHeartbeatAt = leaserec.ParseTimestamp(leaserec.FormatTime(now.Add(time.Duration(round) * time.Millisecond)))
			e.SetSession(id, &so)
		} else {
			e.sessionDirty(id) // re-derived with the same deadline
		}
		e.Tick(now)
		most = max(most, len(e.dl))
	}
	if bound := 2*len(e.units) + len(e.sessions) + 64 + 1; most > bound {
		t.Fatalf("deadline heap reached %d entries for %d sessions (bound %d)", most, len(e.sessions), bound)
	}
	// Compaction keeps each session's pending deadline.
	e.compactNow()
	if len(e.dl) != len(e.sessions) {
		t.Fatalf("after compaction %d entries, want one per session (%d)", len(e.dl), len(e.sessions))
	}
}
