package model

import (
	"testing"
	"time"

	"steward/gitea/gitearec"
)

// TestConfigDefaultsFillOnlyWhatIsUnset: WithDefaults sets each zero (or negative) field to
// its default and keeps every field that was set.
func TestConfigDefaultsFillOnlyWhatIsUnset(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   Config
		want Config
	}{
		{"zero", Config{}, Config{RefusedWindow: time.Hour, StalePRQuiet: 72 * time.Hour,
			BlockedLabel: gitearec.DefaultBlockedLabel, ActivityLimit: 200}},
		{"negative", Config{RefusedWindow: -time.Second, StalePRQuiet: -time.Second, ActivityLimit: -1},
			Config{RefusedWindow: time.Hour, StalePRQuiet: 72 * time.Hour, BlockedLabel: gitearec.DefaultBlockedLabel,
				ActivityLimit: 200}},
		{"set", Config{RefusedWindow: time.Minute, StalePRQuiet: time.Hour, BlockedLabel: "blocked", ActivityLimit: 1},
			Config{RefusedWindow: time.Minute, StalePRQuiet: time.Hour, BlockedLabel: "blocked", ActivityLimit: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.in.WithDefaults()
			if got.RefusedWindow != tc.want.RefusedWindow || got.StalePRQuiet != tc.want.StalePRQuiet ||
				got.BlockedLabel != tc.want.BlockedLabel || got.ActivityLimit != tc.want.ActivityLimit {
				t.Fatalf("WithDefaults() = %+v\nwant %+v", got, tc.want)
			}
		})
	}
}
