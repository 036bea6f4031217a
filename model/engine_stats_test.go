package model

import (
	"testing"
	"time"
)

// TestStatsDirtyCountsUnitsAndSessions: Stats' Dirty counts the units and the sessions
// waiting to be derived again, and nothing once they are.
func TestStatsDirtyCountsUnitsAndSessions(t *testing.T) {
	for _, tc := range []struct {
		name          string
		lock, session bool
		want          int
	}{
		{"a lock changed", true, false, 1},
		{"a session changed", false, true, 1},
		{"a lock and a session changed", true, true, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := NewEngine(Config{})
			e.SetHealth(SourceLocks, okH())
			if tc.lock {
				lo := lock("a.json", 7, "s1", "", time.Hour, LivenessAlive)
				e.SetLock("a.json", &lo)
			}
			if tc.session {
				so := sess("s9", "active")
				e.SetSession("s9", &so)
			}
			if got := e.Stats().Dirty; got != tc.want {
				t.Errorf("%d dirty, want %d", got, tc.want)
			}
			if e.Flush(now); e.Stats().Dirty != 0 {
				t.Errorf("%d dirty after Flush, want 0", e.Stats().Dirty)
			}
		})
	}
}
