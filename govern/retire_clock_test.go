package govern

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"steward/govern/actionid"
	"steward/leases/leaserec"
	"steward/locks"
)

// TestRetireJudgesExpiryOnlyByATrustedClock: a lock expired by this host's clock, whose owner
// is not proven dead, is retired only when that clock can be trusted: a lock whose
// work_lease was created in this host's future (another clock wrote it) is refused
// clock_untrusted, and nothing is archived.
func TestRetireJudgesExpiryOnlyByATrustedClock(t *testing.T) {
	f := newFixture(t, RoleOperator)
	it := *item(4)
	l := &leaserec.Lease{CreatedAt: leaserec.ParseTimestamp(ts(time.Hour)), ExpiresAt: leaserec.ParseTimestamp(ts(-time.Minute))}
	rec := canonicalLock(it, "feat/issue-4", filepath.Join(f.ws.RepoRoot, "branches", "x"), "bot", "author", "s-lock",
		"tsk-4", 0, f.host(), l) // no pid: the owner is unknown
	name, _ := locks.Name(lockKey(work(4)))
	f.writeLock(name, rec)
	before := f.state()
	pv, err := f.core.Preview(context.Background(), Request{Action: actionid.RetireLock, Target: Target{LockFile: name}})
	if err != nil || pv.Allowed || pv.Refusal == nil || pv.Refusal.Code != codeClockUntrusted {
		t.Fatalf("retire of a lock created in this host's future: %+v %v, want refused %s", pv.Refusal, err, codeClockUntrusted)
	}
	if f.state() != before {
		t.Error("the refused preview changed a file")
	}
}
