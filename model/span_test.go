package model

import (
	"math"
	"testing"
	"time"
)

func TestSpan(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{0, "0s"},
		{999 * time.Millisecond, "0s"},
		{42 * time.Second, "42s"},
		{3*time.Minute + 5*time.Second, "3m05s"},
		{time.Hour, "1h00m"},
		{2*time.Hour + 10*time.Minute + 59*time.Second, "2h10m"},
		{47*time.Hour + 59*time.Minute, "47h59m"},
		{76 * time.Hour, "3d4h"},
		{-90 * time.Second, "-1m30s"},
		{math.MinInt64, "-106751d23h"},
		{math.MaxInt64, "106751d23h"},
	} {
		if got := Span(tc.d); got != tc.want {
			t.Errorf("Span(%v) = %q, want %q", tc.d, got, tc.want)
		}
	}
}
