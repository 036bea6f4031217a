package model

import (
	"strings"
	"testing"
	"time"

	"steward/leases/leaserec"
)

// TestLocksOnAnotherHost: a workspace whose lock directory is on another host reads its
// lock source "not observed from this host" (never ok-and-empty, never unavailable);
// every verdict resting on a lock file — a claim of a lock, an orphan of a lock, a
// lock-lease-mismatch, "free" — is withheld, and the DB's verdicts still show.
func TestLocksOnAnotherHost(t *testing.T) {
	kinds := func(s *Snapshot) string {
		var out []string
		for _, o := range s.Orphans {
			out = append(out, string(o.Kind))
		}
		for _, c := range s.Contention {
			out = append(out, string(c.Kind))
		}
		return strings.Join(out, ",")
	}
	for _, tc := range []struct {
		name            string
		in              func() *Input
		here, elsewhere string
	}{
		{"a lock whose owner died", func() *Input {
			in := baseInput()
			in.Locks = []LockObs{lock("a.json", 1, "s1", "", 10*time.Minute, LivenessDead)}
			return in
		}, "live-lock-dead-owner", ""},
		{"a lock naming another session than the active lease", func() *Input {
			in := baseInput()
			in.Locks = []LockObs{lock("a.json", 2, "s1", "L1", 10*time.Minute, LivenessAlive)}
			in.Leases = []LeaseObs{lease("L2", 2, "s2", leaserec.StatusActive, 10*time.Minute, LivenessAlive)}
			in.Sessions = []SessionObs{sess("s1", "active"), sess("s2", "active")}
			in.RefLeases = map[string]*LeaseObs{"L1": nil}
			return in
		}, "lock-lease-mismatch", ""},
		{"an active lease past its expiry", func() *Input {
			in := baseInput()
			in.Leases = []LeaseObs{lease("L3", 3, "s3", leaserec.StatusActive, -time.Minute, LivenessAlive)}
			in.Sessions = []SessionObs{sess("s3", "active")}
			return in
		}, "active-lease-past-expiry", "active-lease-past-expiry"},
		{"a lease with no session row", func() *Input {
			in := baseInput()
			in.Leases = []LeaseObs{lease("L4", 4, "gone", leaserec.StatusActive, 10*time.Minute, LivenessAlive)}
			return in
		}, "orphan-lease", "orphan-lease"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, observe := LocksHere("", "node-a", now)
			if !observe || h.Status != "" {
				t.Fatalf("no host is this host: %v %+v", observe, h)
			}
			if got := kinds(Build(tc.in(), Config{}, now)); !strings.Contains(got, tc.here) {
				t.Fatalf("here: %q, want %q among them", got, tc.here)
			}
			in := tc.in()
			var ok bool
			in.LocksHealth, ok = LocksHere("build-02", "node-a", now)
			if ok {
				t.Fatal("build-02 is observed from node-a")
			}
			s := Build(in, Config{}, now)
			if got := kinds(s); got != tc.elsewhere {
				t.Fatalf("lock directory on another host: verdicts %q, want %q", got, tc.elsewhere)
			}
			l := s.Sources.Locks
			if l.Status != StatusNotObserved || l.Usable() || l.Need() != NeedRoutine || !strings.Contains(l.Reason, "not observed from this host") || !strings.Contains(l.Reason, "build-02") {
				t.Fatalf("the lock source reads %+v", l)
			}
			for _, c := range s.Claims {
				if c.LockFile != "" {
					t.Fatalf("a claim of a lock not observed: %+v", c)
				}
			}
			for _, it := range s.Items {
				if it.Bucket == BucketRunnable {
					t.Fatalf("an item is runnable with its lock files not observed: %+v", it)
				}
			}
		})
	}
	// The host names compare without case; one named as this host is observed.
	if _, ok := LocksHere("Node-A", "node-a", now); !ok {
		t.Fatal("Node-A is not node-a")
	}
}
