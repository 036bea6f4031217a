package model

import (
	"slices"
	"strings"
	"testing"
	"time"

	"steward/govern/actionid"
	"steward/leases/leaserec"
)

// TestEveryContentionHasAWayOut: every contention entry the classifier makes carries its
// resolution — who acts, one sentence, the runbook — and every collision counts its claims
// (never 0). Before, a collision had no resolution at all and Count 0.
func TestEveryContentionHasAWayOut(t *testing.T) {
	for _, tc := range classCases() {
		if tc.cont == "" || !tc.want {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			in := baseInput()
			tc.setup(in)
			s := Build(in, Config{Org: "acme", Repo: "widgets"}, now)
			for _, c := range contentionOf(s, tc.cont) {
				if c.Next == nil || c.Next.Say == "" || c.Next.Who == "" || c.Next.Runbook != RunbookOf(c.Kind) {
					t.Fatalf("%s has no way out: %+v", c.Kind, c.Next)
				}
				if c.Count == 0 {
					t.Errorf("%s counts 0 (owners %v)", c.Kind, c.Owners)
				}
			}
		})
	}
}

// TestCollisionResolution: the way out of each collision, by who holds what. A dead owner's
// lock or a lease past its expiry is the losing claim, ended by its sanctioned action while
// the live owner keeps the item; with every owner alive steward picks no winner and says
// whose job it is; a legacy lock's owner (no owner_session) is counted and named.
func TestCollisionResolution(t *testing.T) {
	hour := time.Hour
	for _, tc := range []struct {
		name    string
		kind    ContentionKind
		setup   func(*Input)
		who     string
		say     []string
		actions []string // "id target"
		owners  []string
	}{
		{"two live locks, both owners alive", ContentionDuplicateLiveLock,
			all(withLock(lock("a.json", 7, "s1", "", hour, LivenessAlive)), withLock(lock("b.json", 7, "s2", "", hour, LivenessAlive))),
			ResolveWorkers, []string{"both owners are alive", "steward will not pick a winner"}, nil, []string{"s1", "s2"}},
		{"two live locks, one owner dead", ContentionDuplicateLiveLock,
			all(withLock(lock("a.json", 7, "s1", "", hour, LivenessAlive)), withLock(lock("b.json", 7, "s2", "", hour, LivenessDead))),
			ResolveOperator, []string{"s2", "s1 keeps the item", actionid.RetireLock}, []string{actionid.RetireLock + " b.json"}, []string{"s1", "s2"}},
		{"a legacy lock's owner counts", ContentionDuplicateLiveLock,
			all(withLock(lock("a.json", 7, "s1", "", hour, LivenessAlive)), withLock(lock("b.json", 7, "", "", hour, LivenessAlive))),
			ResolveWorkers, []string{"steward will not pick a winner"}, nil, []string{"s1", "pid 42 (b.json: no owner_session)"}},
		{"an owner on another host is not proven dead", ContentionDuplicateLiveLock,
			all(withLock(lock("a.json", 7, "s1", "", hour, LivenessAlive)), withLock(mutLock(lock("b.json", 7, "s2", "", hour, LivenessUnknown), func(l *LockObs) { l.OtherHost = true }))),
			ResolveWorkers, []string{"s2: not proven dead", "will not pick a winner"}, nil, []string{"s1", "s2"}},
		{"two active leases, one past its expiry", ContentionConcurrentActiveLease,
			all(withSess("s1", "s2"), withLease(lease("L1", 7, "s1", leaserec.StatusActive, 5*time.Minute, LivenessAlive)), withLease(lease("L2", 7, "s2", leaserec.StatusActive, -time.Minute, LivenessAlive))),
			ResolveOperator, []string{"s1 keeps the item", actionid.ReclaimExpired}, []string{actionid.ReclaimExpired + " L2"}, []string{"s1", "s2"}},
		{"two active leases, both alive", ContentionConcurrentActiveLease,
			all(withSess("s1", "s2"), withLease(lease("L1", 7, "s1", leaserec.StatusActive, 5*time.Minute, LivenessAlive)), withLease(lease("L2", 7, "s2", leaserec.StatusActive, time.Minute, LivenessAlive))),
			ResolveWorkers, []string{"both owners are alive"}, nil, []string{"s1", "s2"}},
		{"lock and lease disagree, owners alive", ContentionLockLeaseMismatch,
			all(withSess("s1", "s2"), withLease(lease("L1", 7, "s1", leaserec.StatusActive, 5*time.Minute, LivenessAlive)), withLock(lock("a.json", 7, "s2", "L1", hour, LivenessAlive))),
			ResolveWorkers, []string{"does not rewrite another worker's lock"}, nil, []string{"s2", "s1"}},
		{"claims refused", ContentionClaimRefused, func(in *Input) {
			in.WorkItems = []leaserec.WorkItem{workItem(7)}
			in.Events = []leaserec.Event{refused(1, 7, "s2", "s1", time.Minute)}
		}, resolveNone, []string{"nothing to do"}, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := baseInput()
			tc.setup(in)
			s := Build(in, Config{Org: "acme", Repo: "widgets"}, now)
			cs := contentionOf(s, tc.kind)
			if len(cs) != 1 {
				t.Fatalf("%d %s entries: %+v", len(cs), tc.kind, s.Contention)
			}
			c := cs[0]
			if c.Next == nil || c.Next.Who != tc.who {
				t.Fatalf("who %+v, want %s", c.Next, tc.who)
			}
			for _, w := range tc.say {
				if !strings.Contains(c.Next.Say, w) {
					t.Errorf("the resolution does not say %q: %s", w, c.Next.Say)
				}
			}
			var got []string
			for _, a := range c.Next.Actions {
				got = append(got, a.ID+" "+a.Target.LockFile+a.Target.LeaseID)
				if a.Allowed != nil {
					t.Error("allowed must stay nil until the core annotates")
				}
			}
			if !slices.Equal(got, tc.actions) {
				t.Errorf("actions %v, want %v", got, tc.actions)
			}
			if tc.owners != nil && (!slices.Equal(c.Owners, tc.owners) || c.Count != len(tc.owners)) {
				t.Errorf("owners %v count %d, want %v", c.Owners, c.Count, tc.owners)
			}
		})
	}
}
