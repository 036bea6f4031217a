package govern

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"steward/govern/actionid"
	"steward/locks"
)

// TestVerifyClaimEndedSinceByItsLiveLock: a claim whose outcome record was lost, its lease
// expired by the sweep since, its lock still live and naming the lease: Verify settles it
// succeeded from that live lock — the claim took effect and ended since
// (actions_claim.go:591, lockEverNamed's live lock).
func TestVerifyClaimEndedSinceByItsLiveLock(t *testing.T) {
	f := newFixture(t, RoleOperator)
	ctx := context.Background()
	out := f.claim("s1", 7)
	id, name := out.Detail["lease_id"], out.Detail["lock_file"]
	// Drop the claim's outcome record: the log ends at its intent.
	lines := bytes.SplitAfter(mustRead(t, f.audit.Path()), []byte("\n"))
	if len(lines) != 3 || !bytes.Contains(lines[1], []byte(`"`+KindOutcome+`"`)) {
		t.Fatalf("audit log: want intent and outcome, got %q", lines)
	}
	if err := os.WriteFile(f.audit.Path(), lines[0], 0o600); err != nil {
		t.Fatal(err)
	}
	f.clock.Add(time.Hour)
	if _, sw, err := f.core.Run(ctx, Request{Action: actionid.ExpireSweep}, ""); err != nil || sw.Result != ResultSucceeded {
		t.Fatalf("expire sweep: %+v %v", sw, err)
	}
	if l := f.lease(id); !l.Status.Terminal() {
		t.Fatalf("lease %s is %s after the sweep, want ended", id, l.Status)
	}
	if e := locks.ReadFile(f.ws.LocksDir, name); e.Missing || e.Record.LeaseID != id {
		t.Fatalf("lock %s after the sweep: %+v, want it live, naming %s", name, e, id)
	}
	v := f.verifyOne()
	if v.Attempt != out.Attempt || v.Result != ResultSucceeded ||
		!strings.Contains(strings.Join(v.Evidence, " "), "lock "+name+" named it") {
		t.Fatalf("verify of the claim: %s %v; want succeeded, its lock naming the lease", v.Result, v.Evidence)
	}
}
