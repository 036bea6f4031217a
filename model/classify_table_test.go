package model

import (
	"testing"
	"time"

	"steward/govern/actionid"
	"steward/leases/leaserec"
	"steward/locks/lockrec"
)

type classCase struct {
	name   string
	orphan OrphanKind
	cont   ContentionKind
	want   bool
	action string // expected action id; "" = inspect only (when want)
	setup  func(in *Input)
}

func withLock(lo LockObs) func(*Input) { return func(in *Input) { in.Locks = append(in.Locks, lo) } }
func withLease(lo LeaseObs) func(*Input) {
	return func(in *Input) { in.Leases = append(in.Leases, lo) }
}
func all(fs ...func(*Input)) func(*Input) {
	return func(in *Input) {
		for _, f := range fs {
			f(in)
		}
	}
}
func withSess(ids ...string) func(*Input) {
	return func(in *Input) {
		for _, id := range ids {
			in.Sessions = append(in.Sessions, sess(id, "active"))
		}
	}
}
func mutLock(lo LockObs, f func(*LockObs)) LockObs { f(&lo); return lo }
func mutLease(lo LeaseObs, f func(*LeaseObs)) LeaseObs {
	f(&lo)
	return lo
}
func unavailableDB(in *Input) {
	in.DBHealth = SourceHealth{Status: StatusUnavailable, Reason: "missing"}
	in.DB = DBSections{}
}

func refused(id int64, n int64, req, hold string, ago time.Duration) leaserec.Event {
	return leaserec.Event{EventID: id, WorkItemID: n, EventType: "claim.refused", CreatedAt: leaserec.ParseTimestamp(ts(-ago)),
		Detail: map[string]any{"requesting_session_id": req, "holding_session_id": hold}}
}

func workItem(n int64) leaserec.WorkItem {
	return leaserec.WorkItem{WorkItemID: n, WorkRef: leaserec.WorkRef{Remote: "origin", Org: "acme", Repo: "widgets", Kind: leaserec.KindIssue, Number: n}}
}

func classCases() []classCase {
	hour := time.Hour
	live := lease("L1", 7, "s1", leaserec.StatusActive, 5*time.Minute, LivenessAlive)
	cases := []classCase{
		{"past expiry", OrphanActiveLeasePastExpiry, "", true, actionid.ReclaimExpired, all(withSess("s1"), withLease(lease("L1", 7, "s1", leaserec.StatusActive, -time.Minute, LivenessAlive)))},
		{"past expiry: expiry missing stays held", OrphanActiveLeasePastExpiry, "", false, "", all(withSess("s1"), withLease(mutLease(live, func(l *LeaseObs) { l.Lease.ExpiresAt = leaserec.ParseTimestamp("") })))},
		{"past expiry: released lease", OrphanActiveLeasePastExpiry, "", false, "", all(withSess("s1"), withLease(lease("L1", 7, "s1", leaserec.StatusReleased, -time.Minute, LivenessAlive)))},
		{"orphan-lease: no session row", OrphanLease, "", true, actionid.AbandonStale, withLease(live)},
		{"orphan-lease: session ended", OrphanLease, "", true, actionid.AbandonStale, all(withLease(live), func(in *Input) { in.Sessions = append(in.Sessions, sess("s1", "ended")) })},
		{"orphan-lease: session live", OrphanLease, "", false, "", all(withSess("s1"), withLease(live))},
		{"orphan-lease: sessions unreadable", OrphanLease, "", false, "", all(withLease(live), func(in *Input) { in.DB.Sessions = false })},
		{"stale dead owner", OrphanStaleLeaseDeadOwner, "", true, actionid.AbandonStale, all(withSess("s1"), withLease(lease("L1", 7, "s1", leaserec.StatusActive, 5*time.Minute, LivenessDead)))},
		{"stale dead owner: foreign host is unknown", OrphanStaleLeaseDeadOwner, "", false, "", all(withSess("s1"), withLease(lease("L1", 7, "s1", leaserec.StatusActive, 5*time.Minute, LivenessUnknown)))},
		{"stale dead owner: expired lease is past-expiry instead", OrphanStaleLeaseDeadOwner, "", false, "", all(withSess("s1"), withLease(lease("L1", 7, "s1", leaserec.StatusActive, -time.Minute, LivenessDead)))},
		{"stale missing worktree", OrphanStaleLeaseMissingWorktree, "", true, actionid.AbandonStale, all(withSess("s1"), withLease(mutLease(live, func(l *LeaseObs) { l.Worktree = WorktreeMissing })))},
		{"stale missing worktree: unknown worktree", OrphanStaleLeaseMissingWorktree, "", false, "", all(withSess("s1"), withLease(mutLease(live, func(l *LeaseObs) { l.Worktree = WorktreeUnknown })))},
		{"lock without worktree, expired", OrphanLockWithoutWorktree, "", true, actionid.RetireLock, withLock(mutLock(lock("a.json", 7, "s1", "", -time.Minute, LivenessUnknown), func(l *LockObs) { l.Worktree = WorktreeMissing }))},
		{"lock without worktree, live owner unknown: inspect", OrphanLockWithoutWorktree, "", true, "", withLock(mutLock(lock("a.json", 7, "s1", "", time.Minute, LivenessUnknown), func(l *LockObs) { l.Worktree = WorktreeMissing }))},
		{"lock without worktree: worktree unknown", OrphanLockWithoutWorktree, "", false, "", withLock(mutLock(lock("a.json", 7, "s1", "", -time.Minute, LivenessUnknown), func(l *LockObs) { l.Worktree = WorktreeUnknown }))},
		{"live lock dead owner", OrphanLiveLockDeadOwner, "", true, actionid.RetireLock, withLock(lock("a.json", 7, "s1", "", time.Minute, LivenessDead))},
		{"live lock dead owner: owner unknown", OrphanLiveLockDeadOwner, "", false, "", withLock(lock("a.json", 7, "s1", "", time.Minute, LivenessUnknown))},
		{"stale lock dead owner", OrphanStaleLockDeadOwner, "", true, actionid.RetireLock, withLock(lock("a.json", 7, "s1", "", -time.Minute, LivenessDead))},
		{"stale lock dead owner: unknown owner", OrphanStaleLockDeadOwner, "", false, "", withLock(lock("a.json", 7, "s1", "", -time.Minute, LivenessUnknown))},
		{"expired lock live owner", OrphanExpiredLockLiveOwner, "", true, "", withLock(lock("a.json", 7, "s1", "", -time.Minute, LivenessAlive))},
		// A heartbeat renewed the lease (now +5m) and failed to rewrite its lock (a full
		// disk): the lock says the claim ends 50 minutes before its lease does.
		{"lock behind its lease", OrphanLockLeaseExpiryMismatch, "", true, "", all(withSess("s1"), withLease(lease("L1", 7, "s1", leaserec.StatusActive, 55*time.Minute, LivenessAlive)), withLock(lock("a.json", 7, "s1", "L1", 5*time.Minute, LivenessAlive)))},
		{"lock ahead of its lease", OrphanLockLeaseExpiryMismatch, "", true, "", all(withSess("s1"), withLease(live), withLock(lock("a.json", 7, "s1", "L1", time.Hour, LivenessAlive)))},
		{"lock and lease within a minute", OrphanLockLeaseExpiryMismatch, "", false, "", all(withSess("s1"), withLease(live), withLock(lock("a.json", 7, "s1", "L1", 5*time.Minute+50*time.Second, LivenessAlive)))},
		{"expiry mismatch: the lease has ended", OrphanLockLeaseExpiryMismatch, "", false, "", all(withSess("s1"), withLease(lease("L1", 7, "s1", leaserec.StatusReleased, 55*time.Minute, LivenessAlive)), withLock(lock("a.json", 7, "s1", "L1", 5*time.Minute, LivenessAlive)))},
		{"expiry mismatch: the lock is another claim's", OrphanLockLeaseExpiryMismatch, "", false, "", all(withSess("s1", "s2"), withLease(lease("L1", 7, "s1", leaserec.StatusActive, 55*time.Minute, LivenessAlive)), withLock(lock("a.json", 7, "s2", "L2", 5*time.Minute, LivenessAlive)))},
		{"expired lock live owner: expiry equal to now is expired", OrphanExpiredLockLiveOwner, "", true, "", withLock(lock("a.json", 7, "s1", "", 0, LivenessAlive))},
		{"expired lock live owner: not yet expired", OrphanExpiredLockLiveOwner, "", false, "", withLock(lock("a.json", 7, "s1", "", time.Second, LivenessAlive))},
		{"never expires, live owner: inspect", OrphanLockNeverExpires, "", true, "", withLock(mutLock(lock("a.json", 7, "s1", "", 0, LivenessAlive), func(l *LockObs) { l.Entry.Record.WorkLease.ExpiresAt = lockrec.Timestamp{} }))},
		{"never expires, dead owner: retire", OrphanLockNeverExpires, "", true, actionid.RetireLock, withLock(mutLock(lock("a.json", 7, "s1", "", 0, LivenessDead), func(l *LockObs) { l.Entry.Record.WorkLease.ExpiresAt = lockrec.ParseTimestamp("soon") }))},
		{"never expires: recorded expiry", OrphanLockNeverExpires, "", false, "", withLock(lock("a.json", 7, "s1", "", hour, LivenessAlive))},
		{"incomplete lock", OrphanIncompleteLock, "", true, "", withLock(mutLock(lock("a.json", 7, "s1", "", hour, LivenessAlive), func(l *LockObs) { l.Entry.Record.LockProvenance = nil }))},
		{"incomplete lock: canonical", OrphanIncompleteLock, "", false, "", withLock(lock("a.json", 7, "s1", "", hour, LivenessAlive))},
		{"legacy lock", OrphanLegacyLock, "", true, "", withLock(mutLock(lock("a.json", 7, "s1", "", hour, LivenessAlive), func(l *LockObs) {
			l.Entry.Record.Claimant = l.Entry.Record.WorkLease.Claimant
			l.Entry.Record.WorkLease.Claimant = nil
		}))},
		{"legacy lock: top-level claimant without profile is incomplete", OrphanLegacyLock, "", false, "", withLock(mutLock(lock("a.json", 7, "s1", "", hour, LivenessAlive), func(l *LockObs) {
			l.Entry.Record.Claimant = &lockrec.Claimant{Username: "bot"}
			l.Entry.Record.WorkLease.Claimant = nil
		}))},
		{"unreadable lock", OrphanUnreadableLock, "", true, "", withLock(LockObs{Entry: lockrec.Entry{Name: "b.json", Unreadable: &lockrec.Unreadable{Reason: lockrec.UnreadableTruncated}}})},
		{"unreadable lock: readable one", OrphanUnreadableLock, "", false, "", withLock(lock("a.json", 7, "s1", "", hour, LivenessAlive))},
		{"pending handoff", OrphanPendingHandoffUnconsumed, "", true, "", all(withSess("s1"), withLease(mutLease(live, func(l *LeaseObs) {
			l.Lease.Provenance = map[string]any{"cross_role_handoff": true, "required_role": "reviewer"}
			l.Lease.CreatedAt = leaserec.ParseTimestamp(ts(-20 * time.Minute))
		})))},
		{"pending handoff: adopted", OrphanPendingHandoffUnconsumed, "", false, "", all(withSess("s1"), withLease(mutLease(live, func(l *LeaseObs) {
			l.Lease.Provenance = map[string]any{"cross_role_handoff": true}
			l.Lease.AdoptedBySessionID = "s2"
			l.Lease.CreatedAt = leaserec.ParseTimestamp(ts(-20 * time.Minute))
		})))},
		{"pending handoff: within recovery grace", OrphanPendingHandoffUnconsumed, "", false, "", all(withSess("s1"), withLease(mutLease(live, func(l *LeaseObs) {
			l.Lease.Provenance = map[string]any{"cross_role_handoff": true}
		})))},
		{"merged pr live claim", OrphanMergedPRLiveClaim, "", true, "", all(withSess("s1"), withLease(mutLease(live, func(l *LeaseObs) { l.Lease.Work.Kind = leaserec.KindPR })),
			func(in *Input) { in.Gitea = []GiteaFact{{Item: prItem(7), Found: true, State: "closed", Merged: true}} })},
		{"merged pr live claim: no claim", OrphanMergedPRLiveClaim, "", false, "", func(in *Input) { in.Gitea = []GiteaFact{{Item: prItem(7), Found: true, State: "closed", Merged: true}} }},
		{"closed issue live claim", OrphanClosedIssueLiveClaim, "", true, "", all(withLock(lock("a.json", 7, "s1", "", hour, LivenessAlive)),
			func(in *Input) { in.Gitea = []GiteaFact{{Item: issueItem(7), Found: true, State: "closed"}} })},
		{"closed issue live claim: Gitea unavailable", OrphanClosedIssueLiveClaim, "", false, "", all(withLock(lock("a.json", 7, "s1", "", hour, LivenessAlive)),
			func(in *Input) {
				in.Gitea = []GiteaFact{{Item: issueItem(7), Found: true, State: "closed"}}
				in.GiteaHealth = SourceHealth{Status: StatusUnavailable}
			})},
		{"stale pr no claim", OrphanStalePRNoClaim, "", true, "", func(in *Input) {
			in.Gitea = []GiteaFact{{Item: prItem(9), Found: true, State: "open", UpdatedAt: now.Add(-100 * hour), HeadBranch: "feat/y"}}
		}},
		{"stale pr no claim: DB unavailable", OrphanStalePRNoClaim, "", false, "", all(unavailableDB, func(in *Input) {
			in.Gitea = []GiteaFact{{Item: prItem(9), Found: true, State: "open", UpdatedAt: now.Add(-100 * hour)}}
		})},
		{"stale pr no claim: a lock holds its head branch", OrphanStalePRNoClaim, "", false, "", all(withLock(lock("a.json", 7, "s1", "", hour, LivenessAlive)), func(in *Input) {
			in.Gitea = []GiteaFact{{Item: prItem(9), Found: true, State: "open", UpdatedAt: now.Add(-100 * hour), HeadBranch: "feat/x"}}
		})},
		{"stale pr no claim: recently updated", OrphanStalePRNoClaim, "", false, "", func(in *Input) {
			in.Gitea = []GiteaFact{{Item: prItem(9), Found: true, State: "open", UpdatedAt: now.Add(-hour)}}
		}},
		{"claim refused", "", ContentionClaimRefused, true, "", func(in *Input) {
			in.WorkItems = []leaserec.WorkItem{workItem(7)}
			in.Events = []leaserec.Event{refused(1, 7, "s2", "s1", time.Minute), refused(2, 7, "s3", "s1", 2*time.Minute)}
		}},
		{"claim refused: outside the window", "", ContentionClaimRefused, false, "", func(in *Input) {
			in.WorkItems = []leaserec.WorkItem{workItem(7)}
			in.Events = []leaserec.Event{refused(1, 7, "s2", "s1", 2*hour)}
		}},
		{"duplicate live lock", "", ContentionDuplicateLiveLock, true, "", all(withLock(lock("a.json", 7, "s1", "", hour, LivenessAlive)), withLock(lock("b.json", 7, "s2", "", hour, LivenessAlive)))},
		{"duplicate live lock: different issues", "", ContentionDuplicateLiveLock, false, "", all(withLock(lock("a.json", 7, "s1", "", hour, LivenessAlive)), withLock(lock("b.json", 8, "s2", "", hour, LivenessAlive)))},
		{"concurrent active lease", "", ContentionConcurrentActiveLease, true, "", all(withSess("s1", "s2"), withLease(live), withLease(lease("L2", 7, "s2", leaserec.StatusActive, time.Minute, LivenessAlive)))},
		{"concurrent active lease: one released", "", ContentionConcurrentActiveLease, false, "", all(withSess("s1", "s2"), withLease(live), withLease(lease("L2", 7, "s2", leaserec.StatusReleased, time.Minute, LivenessAlive)))},
		{"mismatch: lease held by another session", "", ContentionLockLeaseMismatch, true, "", all(withSess("s1", "s2"), withLease(live), withLock(lock("a.json", 7, "s2", "L1", hour, LivenessAlive)))},
		{"mismatch: lock names an absent lease", "", ContentionLockLeaseMismatch, true, "", all(withLock(lock("a.json", 7, "s1", "L9", hour, LivenessAlive)), func(in *Input) { in.RefLeases = map[string]*LeaseObs{"L9": nil} })},
		{"mismatch: agreeing lock and lease", "", ContentionLockLeaseMismatch, false, "", all(withSess("s1"), withLease(live), withLock(lock("a.json", 7, "s1", "L1", hour, LivenessAlive)))},
		{"mismatch: DB unavailable, lease unreadable", "", ContentionLockLeaseMismatch, false, "", all(unavailableDB, withLock(lock("a.json", 7, "s1", "L9", hour, LivenessAlive)))},
	}
	return cases
}

func TestClassify(t *testing.T) {
	for _, tc := range classCases() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			in := baseInput()
			tc.setup(in)
			s := Build(in, Config{Org: "acme", Repo: "widgets"}, now)
			if tc.cont != "" {
				got := contentionOf(s, tc.cont)
				if (len(got) > 0) != tc.want {
					t.Fatalf("%s: got %d entries, want present=%v; all: %+v", tc.cont, len(got), tc.want, s.Contention)
				}
				return
			}
			got := orphansOf(s, tc.orphan)
			if (len(got) > 0) != tc.want {
				t.Fatalf("%s: got %d, want present=%v; orphans: %v", tc.orphan, len(got), tc.want, kinds(s))
			}
			if !tc.want {
				return
			}
			o := got[0]
			switch {
			case tc.action == "" && (o.Action != nil || o.InspectOnlyReason == ""):
				t.Fatalf("want inspect only, got action %+v reason %q", o.Action, o.InspectOnlyReason)
			case tc.action != "" && (o.Action == nil || o.Action.ID != tc.action || o.InspectOnlyReason != ""):
				t.Fatalf("want action %s, got %+v (inspect %q)", tc.action, o.Action, o.InspectOnlyReason)
			case o.Action != nil && o.Action.Allowed != nil:
				t.Fatalf("allowed must stay nil until the core annotates")
			case len(o.Evidence) == 0:
				t.Fatalf("orphan without evidence")
			}
		})
	}
}

func prItem(n int64) Item {
	return Item{Kind: "pr", Number: n, Remote: "origin", Org: "acme", Repo: "widgets"}
}
func issueItem(n int64) Item {
	return Item{Kind: "issue", Number: n, Remote: "origin", Org: "acme", Repo: "widgets"}
}

func kinds(s *Snapshot) []OrphanKind {
	var out []OrphanKind
	for _, o := range s.Orphans {
		out = append(out, o.Kind)
	}
	return out
}

// TestEveryKindCovered keeps the table honest: every orphan and contention
// kind has a positive and a near-miss negative case.
func TestEveryKindCovered(t *testing.T) {
	seen := map[string][2]int{}
	for _, tc := range classCases() {
		k := string(tc.orphan) + string(tc.cont)
		c := seen[k]
		if tc.want {
			c[0]++
		} else {
			c[1]++
		}
		seen[k] = c
	}
	var all []string
	for _, k := range OrphanKinds {
		all = append(all, string(k))
	}
	for _, k := range ContentionKinds {
		all = append(all, string(k))
	}
	for _, k := range all {
		if c := seen[k]; c[0] == 0 || c[1] == 0 {
			t.Errorf("kind %s: %d positive, %d negative cases; want at least one of each", k, c[0], c[1])
		}
	}
}
