package govern

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"steward/govern/actionid"
	"steward/leases"
	"steward/leases/leaserec"
	"steward/locks"
)

// TestClaimWhoseLockNamesItAnywayIsUnknown: between a claim's lease and its lock, a lock
// naming that very lease appears under the claim's file name, so the claim's own write
// (which expects no file) fails. The lock names the lease: the claim may stand after all,
// so it is neither refused nor compensated — the outcome is unknown and the lease stays
// active (actions_claim.go:438: a readable lock naming the lease is the claim's).
func TestClaimWhoseLockNamesItAnywayIsUnknown(t *testing.T) {
	f := newFixture(t, RoleOperator)
	ctx := context.Background()
	name, _ := locks.Name(lockKey(work(7)))
	wrote := false
	c := New(f.ws, f.audit, Options{Actor: f.core.actor, Now: f.clock.Now, Step: func(step string) {
		if step != "lease-committed" || wrote {
			return
		}
		r, err := leases.OpenReader(f.ws.DBTarget())
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		ls, err := r.LeasesForWorkItem(ctx, work(7))
		if err != nil || len(ls) != 1 {
			t.Fatalf("the item's active leases: %+v %v", ls, err)
		}
		rec := canonicalLock(*item(7), "feat/issue-7", filepath.Join(f.ws.RepoRoot, "branches", "x"), "bot", "author",
			"s1", "tsk-7", int64(os.Getpid()), f.host(), &ls[0])
		f.writeLock(name, rec)
		wrote = true
	}})
	defer c.Close()
	_, out, err := c.Run(ctx, Request{Action: actionid.Claim, Target: Target{Item: item(7), Session: "s1"},
		Params: ClaimParams{Role: "author", Username: "bot"}}, "")
	if err != nil || !wrote {
		t.Fatalf("claim: %v (the lock naming its lease written: %v)", err, wrote)
	}
	if out.Result != ResultUnknown || !strings.Contains(out.Message, "names it") {
		t.Fatalf("outcome %+v, want unknown, the lock naming the lease", out)
	}
	r, err := leases.OpenReader(f.ws.DBTarget())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	hist, err := r.LeaseHistory(ctx, work(7))
	if err != nil || len(hist) != 1 || hist[0].Status != leaserec.StatusActive {
		t.Fatalf("the item's leases: %+v %v, want the claim's one, still active", hist, err)
	}
	if e := locks.ReadFile(f.ws.LocksDir, name); e.Missing || e.Record.LeaseID != hist[0].LeaseID {
		t.Errorf("lock %s: %+v, want it naming %s still", name, e, hist[0].LeaseID)
	}
}
