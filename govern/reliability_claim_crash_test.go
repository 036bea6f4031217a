package govern

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"steward/govern/actionid"
	"steward/leases"
	"steward/locks"
	"steward/locks/lockrec"
)

// TestClaimCrashAtEveryStep kills the process applying worker.claim at each step between
// its intent and its outcome (the reclaim and retire steps are in TestCrashAtEveryStep).
// Afterwards the item holds nothing, a lease alone (its lock not yet written), or a lease
// and a complete lock naming it — never a partial lock file — and the audit log shows the
// attempt unknown until the verifier settles what the evidence shows.
func TestClaimCrashAtEveryStep(t *testing.T) {
	steps := []string{"intent-written", "before-commit", "lease-committed",
		"lock-" + locks.StepLocked, "lock-" + locks.StepTempWritten, "lock-" + locks.StepTempSynced,
		"lock-" + locks.StepRenamed, "lock-" + locks.StepDirSynced, "effect-done"}
	const n = 7
	for _, backend := range backends {
		for _, step := range steps {
			t.Run(backend+"/"+step, func(t *testing.T) { claimCrashAt(t, backend, step, n) })
		}
	}
}

// claimCrashAt kills a claim of item n at step on backend and checks what is left.
func claimCrashAt(t *testing.T, backend, step string, n int64) {
	f := newFixtureOn(t, RoleOperator, backend)
	err := f.child("crash", "CHILD_ACTION="+actionid.Claim, "CHILD_ITEM=7", "CHILD_STEP="+step).Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("child was not killed at %s: %v", step, err)
	}
	awaitUnfinished(t, f)
	state := claimStateOf(t, f, n)
	atts := Attempts(f.records())
	if len(atts) != 1 || atts[0].Outcome != nil || atts[0].Status() != ResultUnknown {
		t.Fatalf("after the crash the attempt should be unknown with no outcome: %+v", atts)
	}
	vs, err := f.core.Verify(context.Background())
	if err != nil || len(vs) != 1 {
		t.Fatalf("verify: %v %+v", err, vs)
	}
	a := Attempts(f.records())[0]
	if a.Outcomes != 1 || a.Outcome.Result != ResultUnknown {
		t.Fatalf("verifier did not write the missing terminal record as unknown: %+v", a.Outcome)
	}
	switch state {
	case "old":
		if vs[0].Result != ResultFailed || a.Status() != ResultFailed {
			t.Fatalf("nothing claimed, verify says %s (%v)", vs[0].Result, vs[0].Evidence)
		}
	case "new":
		if vs[0].Result != ResultSucceeded || a.Status() != ResultSucceeded {
			t.Fatalf("lease and lock in place, verify says %s (%v)", vs[0].Result, vs[0].Evidence)
		}
	case "lease-only":
		// The evidence cannot settle it: a human releases the lease and claims again.
		if vs[0].Result != ResultUnknown || a.Status() != ResultUnknown || !strings.Contains(strings.Join(vs[0].Evidence, " "), "lock file is missing") {
			t.Fatalf("lease without lock: verify %+v", vs[0])
		}
	}
	t.Logf("killed at %s: state %s, verify %s", step, state, vs[0].Result)
}

// claimStateOf reads issue n's lease and lock: "old" (neither), "lease-only", or "new"
// (a lease and a complete canonical lock naming it); anything else fails the test.
func claimStateOf(t *testing.T, f *fixture, n int64) string {
	t.Helper()
	r, err := leases.OpenReader(f.ws.DBTarget())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	active, err := r.LeasesForWorkItem(context.Background(), work(n))
	if err != nil {
		t.Fatal(err)
	}
	if len(active) > 1 {
		t.Fatalf("%d active leases", len(active))
	}
	name, _ := locks.Name(lockKey(work(n)))
	e := locks.ReadFile(f.ws.LocksDir, name)
	ents, _ := os.ReadDir(f.ws.LocksDir)
	for _, de := range ents {
		if !strings.HasPrefix(de.Name(), ".") && de.Name() != name && de.Name() != "retired" {
			t.Fatalf("unexpected file %s in the locks directory", de.Name())
		}
	}
	switch {
	case len(active) == 0 && e.Missing:
		return "old"
	case len(active) == 1 && e.Missing:
		return "lease-only"
	case len(active) == 1 && e.Unreadable == nil && e.Record.LeaseID == active[0].LeaseID:
		if a := lockrec.Assess(&e.Record, f.clock.Now()); a.Contract != lockrec.ContractCanonical {
			t.Fatalf("the lock is %s: %v", a.Contract, a.MissingFields)
		}
		return "new"
	}
	t.Fatalf("partial state: %d active leases, lock missing=%v unreadable=%+v (%s)", len(active), e.Missing, e.Unreadable, filepath.Join(f.ws.LocksDir, name))
	return ""
}
