package model

import (
	"testing"
	"time"
)

// TestEngineSnapshotsNameTheClockSet: a snapshot names the clock SetClock gave, and this
// host's when the clock given names none.
func TestEngineSnapshotsNameTheClockSet(t *testing.T) {
	for _, tc := range []struct {
		name      string
		set, want Clock
	}{
		{"the DB's", Clock{Source: ClockDB, Offset: -5 * time.Minute, ReadAt: now},
			Clock{Source: ClockDB, Offset: -5 * time.Minute, ReadAt: now}},
		{"none named", Clock{}, Clock{Source: ClockHost}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := NewEngine(Config{})
			e.SetClock(tc.set)
			if got := e.Publish(now).Clock; got != tc.want {
				t.Fatalf("clock %+v, want %+v", got, tc.want)
			}
		})
	}
}
