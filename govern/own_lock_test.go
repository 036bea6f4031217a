package govern

import (
	"context"
	"testing"

	"steward/govern/actionid"
	"steward/locks"
)

// TestHeartbeatNeverTakesAnotherLeasesLock: the lock file a lease's claim wrote was since
// rewritten to name another lease (another claim took the item's lock over). A heartbeat
// of the first lease is refused lock_missing — it never renews, or writes into, a lock
// that is another claim's — and that lock is left as it was (actions_worker.go:94: the
// file found is this lease's only when it names it).
func TestHeartbeatNeverTakesAnotherLeasesLock(t *testing.T) {
	f := newFixture(t, RoleOperator)
	out := f.claim("s1", 7)
	id, name := out.Detail["lease_id"], out.Detail["lock_file"]
	e := locks.ReadFile(f.ws.LocksDir, name)
	if e.Missing || e.Unreadable != nil || e.Record.LeaseID != id {
		t.Fatalf("the claim's lock %s: %+v", name, e)
	}
	rec := e.Record
	rec.LeaseID = "L-other"
	if _, err := locks.WriteCAS(f.ws.LocksDir, name, locks.FenceOf(&e.Record), rec); err != nil {
		t.Fatal(err)
	}
	before := f.state()
	pv, err := f.core.Preview(context.Background(),
		Request{Action: actionid.Heartbeat, Target: Target{LeaseID: id, Session: "s1"}})
	if err != nil || pv.Allowed || pv.Refusal == nil || pv.Refusal.Code != CodeLockMissing {
		t.Fatalf("heartbeat of a lease whose lock names another: allowed=%v %+v %v; want refused %s",
			pv.Allowed, pv.Refusal, err, CodeLockMissing)
	}
	if f.state() != before {
		t.Fatal("the refused preview changed the workspace")
	}
}
