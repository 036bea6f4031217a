package model

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"steward/leases/leaserec"
)

// TestClaimRefusedEvidenceNamesTheSessions: each refusal's evidence line names who asked and
// who held the item, and says so when the event names neither session or only one: a
// session the event does not name is never left blank.
func TestClaimRefusedEvidenceNamesTheSessions(t *testing.T) {
	for _, tc := range []struct {
		req, hold, want string
	}{
		{"s2", "s1", "cp:1 s2 refused, held by s1"},
		{"s2", "", "cp:1 s2 refused, held by (session not recorded)"},
		{"", "s1", "cp:1 (session not recorded) refused, held by s1"},
		{"", "", "cp:1 claim refused (sessions not recorded: the event names no session)"},
	} {
		in := baseInput()
		in.WorkItems = []leaserec.WorkItem{workItem(7)}
		in.Events = []leaserec.Event{refused(1, 7, tc.req, tc.hold, time.Minute)}
		s := Build(in, Config{}, now)
		cs := contentionOf(s, ContentionClaimRefused)
		if len(cs) != 1 || len(cs[0].Evidence) != 1 {
			t.Fatalf("requesting %q, holding %q: %+v; want one claim-refused with one line", tc.req, tc.hold, cs)
		}
		if got := cs[0].Evidence[0].Value; got != tc.want {
			t.Errorf("requesting %q, holding %q: evidence %q, want %q", tc.req, tc.hold, got, tc.want)
		}
	}
}

// TestClaimRefusedCountsAllListsTen: claim-refused counts every refusal in the window, says the
// window in seconds, and lists the first ten refusals as evidence.
func TestClaimRefusedCountsAllListsTen(t *testing.T) {
	for _, tc := range []struct {
		refusals int
		window   time.Duration
		windowS  int64
	}{
		{1, 0, 3600},
		{10, 30 * time.Minute, 1800},
		{12, 0, 3600},
	} {
		in := baseInput()
		in.WorkItems = []leaserec.WorkItem{workItem(7)}
		for i := range tc.refusals {
			in.Events = append(in.Events, refused(int64(i+1), 7, "s2", "s1", time.Duration(i+1)*time.Second))
		}
		s := Build(in, Config{RefusedWindow: tc.window}, now)
		cs := contentionOf(s, ContentionClaimRefused)
		if len(cs) != 1 {
			t.Fatalf("%d refusals: %d claim-refused entries", tc.refusals, len(cs))
		}
		c := cs[0]
		var lines []string
		for _, e := range c.Evidence {
			lines = append(lines, e.Value)
		}
		var want []string
		for i := range min(tc.refusals, 10) {
			want = append(want, fmt.Sprintf("cp:%d s2 refused, held by s1", i+1))
		}
		if c.Count != tc.refusals || c.WindowS != tc.windowS || !slices.Equal(lines, want) {
			t.Errorf("%d refusals in %s: count %d, window_s %d, evidence %q; want %d, %d, %q", tc.refusals, tc.window,
				c.Count, c.WindowS, lines, tc.refusals, tc.windowS, want)
		}
	}
}

// TestLockLeaseMismatchRules: when a readable lock and the item's leases disagree on who
// holds it, and when they do not.
func TestLockLeaseMismatchRules(t *testing.T) {
	hour := time.Hour
	l1 := lease("L1", 7, "s1", leaserec.StatusActive, hour, LivenessAlive)
	for _, tc := range []struct {
		name  string
		setup func(*Input)
		why   string // the mismatch line; "" = no lock-lease-mismatch
	}{
		{"a lock naming no lease, its session's lease active",
			all(withSess("s1"), withLease(l1), withLock(lock("a.json", 7, "s1", "", hour, LivenessAlive))), ""},
		{"a lock naming no lease, another session's lease active",
			all(withSess("s1", "s2"), withLease(l1), withLock(lock("a.json", 7, "s2", "", hour, LivenessAlive))),
			"the item's active lease L1 (session s1) is not the one the lock names"},
		{"a lock naming neither lease nor session, a lease active",
			all(withSess("s1"), withLease(l1), withLock(lock("a.json", 7, "", "", hour, LivenessAlive))), ""},
		{"a lock naming its lease, a second lease of the same session active",
			all(withSess("s1"), withLease(l1), withLease(lease("L2", 7, "s1", leaserec.StatusActive, hour, LivenessAlive)),
				withLock(lock("a.json", 7, "s1", "L1", hour, LivenessAlive))),
			"the item's active lease L2 (session s1) is not the one the lock names"},
		{"a lock naming a lease on another item",
			all(withSess("s1"), withLease(lease("L1", 8, "s1", leaserec.StatusActive, hour, LivenessAlive)),
				withLock(lock("a.json", 7, "s1", "L1", hour, LivenessAlive))),
			"lease L1 is on acme/widgets#8, the lock is for acme/widgets#7"},
		{"a lock naming a lease of no known work item",
			all(withSess("s1"), withLease(mutLease(l1, func(l *LeaseObs) { l.Lease.Work = leaserec.WorkRef{} })),
				withLock(lock("a.json", 7, "s1", "L1", hour, LivenessAlive))), ""},
		{"a live lock naming a released lease",
			all(withSess("s1"), withLease(lease("L1", 7, "s1", leaserec.StatusReleased, hour, LivenessAlive)),
				withLock(lock("a.json", 7, "s1", "L1", hour, LivenessAlive))),
			"but its lease L1 is released"},
		{"an expired lock naming a released lease",
			all(withSess("s1"), withLease(lease("L1", 7, "s1", leaserec.StatusReleased, hour, LivenessAlive)),
				withLock(lock("a.json", 7, "s1", "L1", -time.Minute, LivenessAlive))), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := baseInput()
			tc.setup(in)
			s := Build(in, Config{}, now)
			cs := contentionOf(s, ContentionLockLeaseMismatch)
			if tc.why == "" {
				if len(cs) != 0 {
					t.Fatalf("want no lock-lease-mismatch, got %+v", cs[0].Evidence)
				}
				return
			}
			if len(cs) != 1 {
				t.Fatalf("%d lock-lease-mismatch entries, want 1: %+v", len(cs), s.Contention)
			}
			if got := cs[0].Evidence[len(cs[0].Evidence)-1].Value; !strings.Contains(got, tc.why) {
				t.Errorf("mismatch says %q, want it to say %q", got, tc.why)
			}
		})
	}
}

// TestContentionSessionsLeaveOutTheUnnamed: a contention entry lists the sessions its claims
// name, sorted, and none for a claim that names no session (a legacy lock's owner).
func TestContentionSessionsLeaveOutTheUnnamed(t *testing.T) {
	hour := time.Hour
	for _, tc := range []struct {
		setup func(*Input)
		want  []string
	}{
		{all(withLock(lock("a.json", 7, "s2", "", hour, LivenessAlive)), withLock(lock("b.json", 7, "s1", "", hour, LivenessAlive))),
			[]string{"s1", "s2"}},
		{all(withLock(lock("a.json", 7, "s1", "", hour, LivenessAlive)), withLock(lock("b.json", 7, "", "", hour, LivenessAlive))),
			[]string{"s1"}},
	} {
		in := baseInput()
		tc.setup(in)
		s := Build(in, Config{}, now)
		cs := contentionOf(s, ContentionDuplicateLiveLock)
		if len(cs) != 1 || !slices.Equal(cs[0].Sessions, tc.want) {
			t.Errorf("duplicate-live-lock %+v; want one naming sessions %q", cs, tc.want)
		}
	}
}

// TestOrphanNamesTheLockThatHoldsTheItem: a closed issue held only by a lock names the lock's
// session, lease and file as the claim to end.
func TestOrphanNamesTheLockThatHoldsTheItem(t *testing.T) {
	in := baseInput()
	in.Locks = []LockObs{lock("a.json", 7, "s1", "L9", time.Hour, LivenessAlive)}
	in.RefLeases = map[string]*LeaseObs{"L9": nil}
	in.Gitea = []GiteaFact{{Item: issueItem(7), Found: true, State: "closed"}}
	s := Build(in, Config{}, now)
	os := orphansOf(s, OrphanClosedIssueLiveClaim)
	if len(os) != 1 {
		t.Fatalf("%d closed-issue-live-claim orphans: %v", len(os), kinds(s))
	}
	if o := os[0]; o.SessionID != "s1" || o.LeaseID != "L9" || o.LockFile != "a.json" {
		t.Errorf("orphan names session %q, lease %q, lock %q; want s1, L9, a.json", o.SessionID, o.LeaseID, o.LockFile)
	}
}

// TestItemStateReasonsAndHolders: an item's state says why it is in its bucket — once, and
// "unproven" only for an item with an undecodable lease row — lists what holds it, and
// keeps its evidence in an array of its own length.
func TestItemStateReasonsAndHolders(t *testing.T) {
	open := func(in *Input) { in.Gitea = []GiteaFact{{Item: issueItem(7), Found: true, State: "open"}} }
	leased := "an active lease or a live lock holds the item"
	for _, tc := range []struct {
		name    string
		setup   func(*Input)
		reasons []string
		fields  []string // the evidence's fields, in order
	}{
		{"a live lock", all(open, withLock(lock("a.json", 7, "s1", "", time.Hour, LivenessAlive))),
			[]string{leased}, []string{"state", "labels", "lock_file"}},
		{"two live locks", all(open, withLock(lock("a.json", 7, "s1", "", time.Hour, LivenessAlive)),
			withLock(lock("b.json", 7, "s2", "", time.Hour, LivenessAlive))),
			[]string{leased}, []string{"state", "labels", "lock_file", "lock_file"}},
		{"an active lease", all(open, withSess("s1"), withLease(lease("L1", 7, "s1", leaserec.StatusActive, time.Hour, LivenessAlive))),
			[]string{leased}, []string{"state", "labels", "leases.L1"}},
		{"a lease row with an undecodable value", all(open, withSess("s1"),
			withLease(mutLease(lease("L1", 7, "s1", leaserec.StatusActive, time.Hour, LivenessAlive), func(l *LeaseObs) {
				l.Lease.Problems = []string{"owner_pid: not an integer"}
			}))),
			[]string{"unproven: a lease row on the item has undecodable values; orphan-lease and lock-lease-mismatch are " +
				"not concluded for it", leased},
			[]string{"state", "labels", "unproven", "leases.L1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := baseInput()
			tc.setup(in)
			s := Build(in, Config{}, now)
			var st *ItemState
			for _, it := range s.Items {
				if it.Item.Number == 7 {
					st = it
				}
			}
			if st == nil {
				t.Fatal("no state for #7")
			}
			var fields []string
			for _, e := range st.Evidence {
				fields = append(fields, e.Field)
			}
			if st.Bucket != BucketLeased || !slices.Equal(st.Reasons, tc.reasons) || !slices.Equal(fields, tc.fields) {
				t.Errorf("bucket %s, reasons %q, evidence %q; want %s, %q, %q", st.Bucket, st.Reasons, fields,
					BucketLeased, tc.reasons, tc.fields)
			}
			if cap(st.Evidence) != len(st.Evidence) {
				t.Errorf("%d evidence lines in an array of %d", len(st.Evidence), cap(st.Evidence))
			}
		})
	}
}
