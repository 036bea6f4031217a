package model

import (
	"slices"
	"testing"
	"time"

	"steward/leases/leaserec"
)

// onItem moves a lock onto org/repo as written (the case of a hand-written or older tool's
// record), keeping its issue number.
func onItem(lo LockObs, org, repo string) LockObs {
	lo.Entry.Record.Org, lo.Entry.Record.Repo = org, repo
	lo.Entry.Key, _ = lo.Entry.Record.Key()
	return lo
}

// TestItemIdentityIsCaseFolded: Gitea owner and repository names are case-insensitive, and
// the supervised system compares them folded (seed digest: work items are keyed by
// lower(org), lower(repo); lockrec.Key.Identity and leaserec.Fold apply the same rule). A lock
// written as ACME/Widgets#7 and a lease and lock on acme/widgets#7 are one item: one row,
// their duplicate lock is a duplicate-live-lock, the lease is not "on another item", a
// closed issue fact joins every spelling, and a lease's refusals count on the same item.
func TestItemIdentityIsCaseFolded(t *testing.T) {
	in := baseInput()
	in.Sessions = append(in.Sessions, sess("s1", "active"), sess("s2", "active"))
	in.Leases = append(in.Leases, lease("L1", 7, "s1", leaserec.StatusActive, time.Hour, LivenessAlive))
	in.Locks = append(in.Locks,
		onItem(lock("upper.json", 7, "s1", "L1", time.Hour, LivenessAlive), "ACME", "Widgets"),
		lock("lower.json", 7, "s2", "", time.Hour, LivenessAlive))
	wi := workItem(7)
	wi.WorkRef.Org, wi.WorkRef.Repo = "Acme", "WIDGETS"
	in.WorkItems = []leaserec.WorkItem{wi}
	in.Events = []leaserec.Event{refused(1, 7, "s2", "s1", time.Minute)}
	closed := issueItem(7)
	closed.Org = " acme "
	in.Gitea = []GiteaFact{{Item: closed, Found: true, State: "closed"}}
	s := Build(in, Config{}, now)

	var rows []string
	for _, it := range s.Items {
		if it.Item.Number == 7 {
			rows = append(rows, it.Item.String())
		}
	}
	if len(rows) != 1 {
		t.Errorf("acme/widgets#7 in four spellings shows as %d items %q; want one", len(rows), rows)
	}
	if d := contentionOf(s, ContentionDuplicateLiveLock); len(d) != 1 {
		t.Errorf("two live locks of one item in two spellings: %d duplicate-live-lock findings; want 1", len(d))
	}
	for _, c := range contentionOf(s, ContentionLockLeaseMismatch) {
		if !slices.Contains(c.LockFiles, "upper.json") {
			continue // lower.json's owner s2 is not the lease's session: a real mismatch
		}
		t.Errorf("a lease on acme/widgets#7 and a lock on ACME/Widgets#7 read as a mismatch: %+v", c)
	}
	if r := contentionOf(s, ContentionClaimRefused); len(r) != 1 || r[0].Count != 1 {
		t.Errorf("the refusal on Acme/WIDGETS#7: %+v; want one claim-refused on the item", r)
	}
	if o := orphansOf(s, OrphanClosedIssueLiveClaim); len(o) == 0 {
		t.Error("the issue is closed (fact on \" acme \"/widgets#7) and claimed (lock on ACME/Widgets#7): no closed-issue-live-claim")
	}
}
