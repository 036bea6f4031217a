package govern

import (
	"context"
	"testing"

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
