package model

import (
	"slices"
	"strings"
	"testing"
	"time"

	"steward/leases/leaserec"
	"steward/locks/lockrec"
)

// TestLeaseJoinsTheLockOfItsSession: an active lease and a lock of its item are one claim
// when the lock names the lease, or names no lease and is owned by the lease's session;
// a lock of another session, or naming another lease, stays a claim of its own.
func TestLeaseJoinsTheLockOfItsSession(t *testing.T) {
	l1 := lease("L1", 7, "s1", leaserec.StatusActive, 5*time.Minute, LivenessAlive)
	exp := 5*time.Minute + 30*time.Second
	for _, tc := range []struct {
		name      string
		lo        LockObs
		claims    int    // claims in the snapshot
		lockLease string // the lease id the claim on the lock names
	}{
		{"the lock names the lease", lock("a.json", 7, "s2", "L1", exp, LivenessAlive), 1, "L1"},
		{"the lock names no lease, the lease's session owns it", lock("a.json", 7, "s1", "", exp, LivenessAlive), 1, "L1"},
		{"the lock names no lease, another session owns it", lock("a.json", 7, "s2", "", exp, LivenessAlive), 2, ""},
		{"the lock names another lease, the lease's session owns it", lock("a.json", 7, "s1", "L9", exp, LivenessAlive),
			2, "L9"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := baseInput()
			all(withSess("s1", "s2"), withLease(l1), withLock(tc.lo))(in)
			s := Build(in, Config{}, now)
			if len(s.Claims) != tc.claims {
				t.Errorf("%d claims, want %d", len(s.Claims), tc.claims)
			}
			if c := claimOf(t, s, "a.json"); c.LeaseID != tc.lockLease {
				t.Errorf("the claim on a.json names lease %q, want %q", c.LeaseID, tc.lockLease)
			}
		})
	}
}

// TestDecodeFindingsNamedOnTheirClaim: a readable lock's decode findings are evidence lines
// of its claim, each valued "path: detail" (just the detail for a finding on the whole
// document); missing fields are left out.
func TestDecodeFindingsNamedOnTheirClaim(t *testing.T) {
	in := baseInput()
	in.Locks = []LockObs{mutLock(lock("a.json", 7, "s1", "", time.Hour, LivenessAlive), func(l *LockObs) {
		l.Entry.Findings = []lockrec.Finding{
			{Kind: "duplicate-key", Path: "branch", Detail: "an earlier value dropped"},
			{Kind: lockrec.FindingMissing, Path: "pid", Detail: "required field is absent or blank"},
			{Kind: lockrec.FindingOutOfRange, Detail: "the whole record"},
		}
	})}
	c := claimOf(t, Build(in, Config{}, now), "a.json")
	var got []Evidence
	for _, e := range c.Evidence {
		if strings.HasPrefix(e.Field, "decode.") {
			got = append(got, e)
		}
	}
	want := []Evidence{
		{Source: SourceLocks, Field: "decode.duplicate-key", Value: "branch: an earlier value dropped"},
		{Source: SourceLocks, Field: "decode.out-of-range", Value: "the whole record"},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("decode evidence %+v, want %+v", got, want)
	}
}
