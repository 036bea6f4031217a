package leaserec

import (
	"testing"
	"time"
)

// FuzzParseTimestamp checks that a recorded timestamp round-trips through
// FormatTime.
func FuzzParseTimestamp(f *testing.F) {
	for _, s := range []string{"2026-07-23T10:00:00Z", "2026-07-23T10:00:00+05:30", "2026-07-23 10:00:00", "", "garbage", "2026-13-40T99:00:00Z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ts := ParseTimestamp(s)
		if !ts.OK() {
			return
		}
		back := ParseTimestamp(FormatTime(ts.Time))
		if ts.Time.Year() >= 0 && ts.Time.Year() <= 9999 && (!back.OK() || !back.Time.Equal(ts.Time.Truncate(time.Microsecond))) {
			t.Fatalf("%q -> %v -> %+v", s, ts.Time, back)
		}
	})
}
