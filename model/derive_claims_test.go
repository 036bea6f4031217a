package model

import (
	"slices"
	"testing"
	"time"

	"steward/leases/leaserec"
	"steward/locks/lockrec"
)

// claimOf is the snapshot's claim on lock file name.
func claimOf(t *testing.T, s *Snapshot, name string) *Claim {
	t.Helper()
	for _, c := range s.Claims {
		if c.LockFile == name {
			return c
		}
	}
	t.Fatalf("no claim on %s among %d", name, len(s.Claims))
	return nil
}

// TestClaimTakesFromItsLock: what a claim shows of its lock. A claim no lease backs shows the
// lock's own expiry, heartbeat, freshness and operation; a lease-backed claim keeps its
// lease's session and owner and takes the lock's only where the lease says nothing; the
// claimant is shown when the lock names either half of it; an owner on another host is named
// when its liveness is unknown.
func TestClaimTakesFromItsLock(t *testing.T) {
	hour := time.Hour
	// lock returns a fresh record each time: mutLock copies the WorkLease pointer.
	a := func() LockObs { return lock("a.json", 7, "s1", "", hour, LivenessAlive) }
	l1 := lease("L1", 7, "s1", leaserec.StatusActive, 5*time.Minute, LivenessAlive)
	claimant := func(c *lockrec.Claimant) LockObs {
		return mutLock(a(), func(l *LockObs) { l.Entry.Record.WorkLease.Claimant = c })
	}
	type shown struct {
		session   string
		owner     Liveness
		otherHost string
		claimant  *Claimant
		expires   time.Time
		heartbeat time.Time
		fresh     string
		role      string
	}
	bot := &Claimant{Username: "bot", Profile: "p"}
	lockOnly := shown{"s1", LivenessAlive, "", bot, now.Add(hour), now.Add(-hour), "active", "author_issue_work"}
	with := func(f func(*shown)) shown { s := lockOnly; f(&s); return s }
	leaseBacked := shown{"s1", LivenessAlive, "", bot, now.Add(5 * time.Minute), now.Add(-time.Minute), "active", "author"}
	for _, tc := range []struct {
		name  string
		setup func(*Input)
		want  shown
	}{
		{"a lock alone", withLock(a()), lockOnly},
		{"a lock alone, expired", withLock(lock("a.json", 7, "s1", "", -time.Minute, LivenessAlive)),
			with(func(s *shown) { s.expires, s.fresh = now.Add(-time.Minute), "expired" })},
		{"a lock naming only its claimant's username", withLock(claimant(&lockrec.Claimant{Username: "bot"})),
			with(func(s *shown) { s.claimant = &Claimant{Username: "bot"} })},
		{"a lock naming only its claimant's profile", withLock(claimant(&lockrec.Claimant{Profile: "p"})),
			with(func(s *shown) { s.claimant = &Claimant{Profile: "p"} })},
		{"a lock naming no claimant", withLock(claimant(nil)), with(func(s *shown) { s.claimant = nil })},
		{"a lock whose owner is on another host", withLock(mutLock(a(), func(l *LockObs) {
			l.Host, l.OtherHost, l.Owner = "vm2", true, LivenessUnknown
		})), with(func(s *shown) { s.owner, s.otherHost = LivenessUnknown, "vm2" })},
		{"a lease and the lock naming it", all(withSess("s1"), withLease(l1),
			withLock(lock("a.json", 7, "s1", "L1", 5*time.Minute+30*time.Second, LivenessAlive))), leaseBacked},
		{"a lease and the lock naming it, another session and a dead owner in the lock", all(withSess("s1"),
			withLease(l1), withLock(lock("a.json", 7, "s2", "L1", 5*time.Minute, LivenessDead))), leaseBacked},
		{"a lease of no session and unknown owner, and the lock naming it", all(
			withLease(mutLease(l1, func(l *LeaseObs) { l.Lease.SessionID, l.Owner = "", LivenessUnknown })),
			withLock(lock("a.json", 7, "s2", "L1", 5*time.Minute, LivenessAlive))),
			func() shown { s := leaseBacked; s.session = "s2"; return s }()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := baseInput()
			tc.setup(in)
			c := claimOf(t, Build(in, Config{}, now), "a.json")
			got := shown{c.SessionID, c.OwnerLiveness, c.OwnerOtherHost, c.Claimant, c.ExpiresAt, c.LastHeartbeat,
				c.Freshness, c.Role}
			if (got.claimant == nil) != (tc.want.claimant == nil) ||
				got.claimant != nil && *got.claimant != *tc.want.claimant {
				t.Errorf("claimant %+v, want %+v", got.claimant, tc.want.claimant)
			}
			got.claimant, tc.want.claimant = nil, nil
			if !got.expires.Equal(tc.want.expires) || !got.heartbeat.Equal(tc.want.heartbeat) {
				t.Errorf("expires %v, heartbeat %v; want %v, %v", got.expires, got.heartbeat, tc.want.expires, tc.want.heartbeat)
			}
			got.expires, got.heartbeat, tc.want.expires, tc.want.heartbeat = time.Time{}, time.Time{}, time.Time{}, time.Time{}
			if got != tc.want {
				t.Errorf("claim shows %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestLeaseClaimEvidenceSizedToItsLines: a lease's claim keeps its evidence — the lease's
// lines, its freshness reasons, its row's problems and its joined lock's lines — in an array
// of exactly that length.
func TestLeaseClaimEvidenceSizedToItsLines(t *testing.T) {
	in := baseInput()
	in.Sessions = []SessionObs{sess("s1", "active")}
	in.Leases = []LeaseObs{mutLease(lease("L1", 7, "s1", leaserec.StatusActive, time.Hour, LivenessDead), func(l *LeaseObs) {
		l.Lease.Problems = []string{"owner_host: not text"}
	})}
	in.Locks = []LockObs{mutLock(lock("a.json", 7, "s1", "L1", time.Hour, LivenessAlive), func(l *LockObs) {
		l.Entry.Findings = []lockrec.Finding{{Kind: "duplicate-key", Path: "branch", Detail: "an earlier value dropped"},
			{Kind: "wrong-type", Path: "pid", Detail: "a string"}}
	})}
	c := claimOf(t, Build(in, Config{}, now), "a.json")
	var fields []string
	for _, e := range c.Evidence {
		fields = append(fields, e.Field)
	}
	want := []string{"leases.status", "leases.expires_at", "freshness", "policy", "owner", "worktree",
		"freshness.reason", "leases.problem",
		"contract", "work_lease.expires_at", "owner", "worktree", "decode.duplicate-key", "decode.wrong-type"}
	if !slices.Equal(fields, want) {
		t.Fatalf("evidence %q, want %q", fields, want)
	}
	if cap(c.Evidence) != len(c.Evidence) {
		t.Errorf("%d evidence lines in an array of %d", len(c.Evidence), cap(c.Evidence))
	}
}

// TestExpiryMismatchBeyondAMinute: a lock and its lease disagree on the claim's expiry only
// when more than a minute apart (a minute exactly is agreement), and the orphan says by how
// much and which way.
func TestExpiryMismatchBeyondAMinute(t *testing.T) {
	for _, tc := range []struct {
		lock time.Duration // the lock's expiry; the lease's is now+10m
		say  string        // "" = no orphan
	}{
		{9 * time.Minute, ""},
		{11 * time.Minute, ""},
		{9*time.Minute - time.Second, "lock a.json is 1m01s behind its lease L1"},
		{11*time.Minute + time.Second, "lock a.json is 1m01s ahead of its lease L1"},
		{time.Minute, "lock a.json is 9m00s behind its lease L1"},
	} {
		in := baseInput()
		in.Sessions = []SessionObs{sess("s1", "active")}
		in.Leases = []LeaseObs{lease("L1", 7, "s1", leaserec.StatusActive, 10*time.Minute, LivenessAlive)}
		in.Locks = []LockObs{lock("a.json", 7, "s1", "L1", tc.lock, LivenessAlive)}
		os := orphansOf(Build(in, Config{}, now), OrphanLockLeaseExpiryMismatch)
		switch {
		case tc.say == "" && len(os) != 0:
			t.Errorf("lock at +%s, lease at +10m: %q; want no mismatch", tc.lock, os[0].Evidence)
		case tc.say == "":
		case len(os) != 1:
			t.Errorf("lock at +%s, lease at +10m: %d mismatch orphans, want 1", tc.lock, len(os))
		case os[0].Evidence[len(os[0].Evidence)-1].Value != tc.say:
			t.Errorf("lock at +%s, lease at +10m: %q, want %q", tc.lock, os[0].Evidence[len(os[0].Evidence)-1].Value, tc.say)
		}
	}
}

// TestNextDeadlineIsTheLockExpiry: an item held by a lock alone changes when the lock
// expires; the engine's next deadline is that instant.
func TestNextDeadlineIsTheLockExpiry(t *testing.T) {
	in := baseInput()
	in.Locks = []LockObs{lock("a.json", 7, "s1", "", 10*time.Minute, LivenessAlive)}
	e := NewEngine(Config{})
	e.load(in)
	e.Flush(now)
	if got, want := e.Next(), now.Add(10*time.Minute); !got.Equal(want) {
		t.Errorf("next deadline %v, want the lock's expiry %v", got, want)
	}
}

// TestPendingHandoffRules: a lease is a cross-role handoff nobody adopted when its provenance
// says so, its handoff status is pending or unsaid, and some role is required of the adopter.
func TestPendingHandoffRules(t *testing.T) {
	for _, tc := range []struct {
		name string
		prov map[string]any
		role string
		want bool
	}{
		{"required role", map[string]any{"cross_role_handoff": true, "required_role": "reviewer"}, "author", true},
		{"status pending", map[string]any{"cross_role_handoff": true, "handoff_status": "pending"}, "author", true},
		{"status empty", map[string]any{"cross_role_handoff": true, "handoff_status": ""}, "author", true},
		{"status adopted", map[string]any{"cross_role_handoff": true, "handoff_status": "adopted"}, "author", false},
		{"required role, the lease's own role unset", map[string]any{"cross_role_handoff": true,
			"required_role": "reviewer"}, "", true},
		{"no role at all", map[string]any{"cross_role_handoff": true}, "", false},
	} {
		in := baseInput()
		in.Sessions = []SessionObs{sess("s1", "active")}
		in.Leases = []LeaseObs{mutLease(lease("L1", 7, "s1", leaserec.StatusActive, time.Hour, LivenessAlive),
			func(l *LeaseObs) {
				l.Lease.Provenance, l.Lease.Role = tc.prov, tc.role
				l.Lease.CreatedAt = leaserec.ParseTimestamp(ts(-20 * time.Minute))
			})}
		got := len(orphansOf(Build(in, Config{}, now), OrphanPendingHandoffUnconsumed)) > 0
		if got != tc.want {
			t.Errorf("%s: pending handoff %v, want %v", tc.name, got, tc.want)
		}
	}
}
