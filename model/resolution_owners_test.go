package model

import (
	"strings"
	"testing"
	"time"
)

// TestCollisionNotProvenDeadNamesTheLiveOwnersFirst: when an owner is not proven dead the
// way out names the owners alive first ("s1 alive and …"), and starts with the unproven
// owners when none is alive.
func TestCollisionNotProvenDeadNamesTheLiveOwnersFirst(t *testing.T) {
	elsewhere := func(name, session string) LockObs {
		return mutLock(lock(name, 7, session, "", time.Hour, LivenessUnknown), func(l *LockObs) { l.OtherHost = true })
	}
	for _, tc := range []struct {
		name  string
		locks []LockObs
		say   string // how the way out begins
	}{
		{"one alive, one on another host", []LockObs{lock("a.json", 7, "s1", "", time.Hour, LivenessAlive),
			elsewhere("b.json", "s2")}, "s1 alive and s2: not proven dead"},
		{"both on another host", []LockObs{elsewhere("a.json", "s1"), elsewhere("b.json", "s2")},
			"s1, s2: not proven dead"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := baseInput()
			in.Locks = tc.locks
			cs := contentionOf(Build(in, Config{Org: "acme", Repo: "widgets"}, now), ContentionDuplicateLiveLock)
			if len(cs) != 1 || cs[0].Next == nil {
				t.Fatalf("duplicate live locks: %+v", cs)
			}
			if r := cs[0].Next; r.Who != ResolveWorkers || !strings.HasPrefix(r.Say, tc.say) {
				t.Fatalf("resolution %s: %q, want workers: %q…", r.Who, r.Say, tc.say)
			}
		})
	}
}
