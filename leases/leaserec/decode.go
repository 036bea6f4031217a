package leaserec

import (
	"encoding/json"
	"strings"
	"time"
)

// TimeState says whether a timestamp column held a usable value.
type TimeState string

// Timestamp states (the seed's expiration states for lock records).
const (
	TimeRecorded    TimeState = "recorded"
	TimeMissing     TimeState = "missing"
	TimeUnparseable TimeState = "unparseable"
)

// TimeLayout is how steward writes timestamps: RFC 3339 UTC with a fixed
// microsecond fraction and a Z suffix, so text order is time order.
const TimeLayout = "2006-01-02T15:04:05.000000Z"

// FormatTime renders t in TimeLayout (UTC).
func FormatTime(t time.Time) string { return t.UTC().Format(TimeLayout) }

// Timestamp is a timestamp column as read: the raw text (fences compare it
// byte for byte), the parsed UTC time and whether parsing worked.
type Timestamp struct {
	Raw   string
	Time  time.Time
	State TimeState
}

// OK reports whether the timestamp was recorded and parsed.
func (t Timestamp) OK() bool { return t.State == TimeRecorded }

var timeLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04Z07:00",
	"2006-01-02T15:04",
}

// ParseTimestamp parses a timestamp column. It accepts RFC 3339 with Z or an
// offset, a space instead of T, and naive values (read as UTC, as the seed
// does). Empty text is TimeMissing; anything else unusable is TimeUnparseable
// and never silently becomes a zero time that reads as "expired long ago".
func ParseTimestamp(raw string) Timestamp {
	s := strings.TrimSpace(raw)
	if s == "" {
		return Timestamp{Raw: raw, State: TimeMissing}
	}
	for _, l := range timeLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return Timestamp{Raw: raw, Time: t.UTC(), State: TimeRecorded}
		}
	}
	return Timestamp{Raw: raw, State: TimeUnparseable}
}

// ParseJSONObject decodes a JSON object column (provenance_json,
// detail_json). Empty text is (nil, true); text that is not a JSON object is
// (nil, false) so readers can flag it instead of failing.
func ParseJSONObject(raw string) (map[string]any, bool) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return nil, true
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil || m == nil {
		return nil, false
	}
	return m, true
}

// ParseStringList decodes an action list column (allowed_actions,
// forbidden_actions): a JSON array of strings, or, tolerated for hand-written
// rows, a comma-separated list. Empty text is an empty list; a JSON array
// holding non-strings reports false.
func ParseStringList(raw string) ([]string, bool) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return nil, true
	}
	if strings.HasPrefix(s, "[") {
		var out []string
		if err := json.Unmarshal([]byte(s), &out); err != nil {
			return nil, false
		}
		return out, true
	}
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out, true
}
