package model

import (
	"fmt"
	"time"
)

// Span writes a duration the way every steward surface shows one to a person — the
// workbench's columns, `steward status`, windows and ages alike — to the second and with
// at most two units: 42s, 3m05s, 2h10m, 3d4h. A negative duration reads with a minus.
// Machine output keeps its own units (window_s, scan_duration_ns).
func Span(d time.Duration) string {
	neg := d < 0
	if neg {
		d = -d
		if d < 0 { // the smallest duration has no positive twin
			d = time.Duration(1<<63 - 1)
		}
	}
	d = d.Truncate(time.Second)
	var s string
	switch {
	case d < time.Minute:
		s = fmt.Sprintf("%ds", int64(d/time.Second))
	case d < time.Hour:
		s = fmt.Sprintf("%dm%02ds", int64(d/time.Minute), int64(d/time.Second)%60)
	case d < 48*time.Hour:
		s = fmt.Sprintf("%dh%02dm", int64(d/time.Hour), int64(d/time.Minute)%60)
	default:
		s = fmt.Sprintf("%dd%dh", int64(d/time.Hour)/24, int64(d/time.Hour)%24)
	}
	if neg {
		return "-" + s
	}
	return s
}
