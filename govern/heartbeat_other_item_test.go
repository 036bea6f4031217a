package govern

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"steward/govern/actionid"
	"steward/locks"
)

// TestHeartbeatNeverRenewsALockOfAnotherItem: the lock file at the name a lease's claim
// wrote still names the lease but was rewritten to name another item. The live model
// does not join it to the lease (a lock of another item), so neither does the core: a
// heartbeat is refused lock_missing, and the lock is left as it was. Before, the file
// found at the claim's name was taken as the lease's whatever item it named, and renewed.
func TestHeartbeatNeverRenewsALockOfAnotherItem(t *testing.T) {
	f := newFixture(t, RoleOperator)
	out := f.claim("s1", 7)
	id, name := out.Detail["lease_id"], out.Detail["lock_file"]
	e := locks.ReadFile(f.ws.LocksDir, name)
	if e.Missing || e.Unreadable != nil || e.Record.LeaseID != id || e.Record.IssueNumber == nil {
		t.Fatalf("the claim's lock %s: %+v", name, e)
	}
	rec := e.Record
	other := *rec.IssueNumber + 1
	rec.IssueNumber = &other
	if rec.WorkLease != nil {
		wl := *rec.WorkLease
		wl.IssueNumber = &other
		rec.WorkLease = &wl
	}
	if _, err := locks.WriteCAS(f.ws.LocksDir, name, locks.FenceOf(&e.Record), rec); err != nil {
		t.Fatal(err)
	}
	if e := locks.ReadFile(f.ws.LocksDir, name); !e.HasKey || *e.Record.IssueNumber != other {
		t.Fatalf("fixture: the rewritten lock %+v", e)
	}
	before := f.state()
	pv, err := f.core.Preview(context.Background(),
		Request{Action: actionid.Heartbeat, Target: Target{LeaseID: id, Session: "s1"}})
	if err != nil || pv.Allowed || pv.Refusal == nil || pv.Refusal.Code != CodeLockMissing {
		t.Fatalf("heartbeat of a lease whose lock names another item: allowed=%v %+v %v; want refused %s",
			pv.Allowed, pv.Refusal, err, CodeLockMissing)
	}
	if f.state() != before {
		t.Fatal("the refused preview changed the workspace")
	}
}

// TestHeartbeatRenewsItsClaimsOwnLockBesideACopy: a copy of a claim's lock file under
// another name that sorts first (the same item, the same lease) is a second live lock of
// the item naming the lease; a heartbeat renews the file its claim wrote, and leaves the
// copy as it was (the item's lookup alone would take the copy, the first by name).
func TestHeartbeatRenewsItsClaimsOwnLockBesideACopy(t *testing.T) {
	f := newFixture(t, RoleOperator)
	out := f.claim("s1", 7)
	id, name := out.Detail["lease_id"], out.Detail["lock_file"]
	own := filepath.Join(f.ws.LocksDir, name)
	b, err := os.ReadFile(own)
	if err != nil {
		t.Fatal(err)
	}
	copied := filepath.Join(f.ws.LocksDir, "0-copy.json")
	if err := os.WriteFile(copied, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if "0-copy.json" >= name {
		t.Fatalf("fixture: the copy's name must sort before %s", name)
	}
	f.clock.Add(time.Minute)
	pv, err := f.core.Preview(context.Background(),
		Request{Action: actionid.Heartbeat, Target: Target{LeaseID: id, Session: "s1"}})
	if err != nil || !pv.Allowed {
		t.Fatalf("heartbeat beside a copy of its lock: %+v %v", pv.Refusal, err)
	}
	if res := f.core.Apply(context.Background(), pv, pv.ConfirmPhrase); res.Result != ResultSucceeded {
		t.Fatalf("heartbeat: %+v", res)
	}
	if after, err := os.ReadFile(own); err != nil || bytes.Equal(after, b) {
		t.Errorf("the claim's own lock %s was not renewed (%v)", name, err)
	}
	if after, err := os.ReadFile(copied); err != nil || !bytes.Equal(after, b) {
		t.Errorf("the copy was written (%v)", err)
	}
}
