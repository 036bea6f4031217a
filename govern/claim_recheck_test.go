package govern

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"steward/govern/actionid"
	"steward/locks"
)

// TestClaimChecksOtherLocksAgainUnderItsFlock: a live lock of the item under another file
// name, written after the claim's own checks and its lease (a worker on another tool
// claiming at the same moment), is seen by the claim's last check, made under the new
// lock's flock right before the lock is created: the claim writes no lock, releases its
// lease again and is refused claimed_by_other; the other worker's lock is the only one.
func TestClaimChecksOtherLocksAgainUnderItsFlock(t *testing.T) {
	f := newFixture(t, RoleOperator)
	var theirs string
	c := New(f.ws, f.audit, Options{Actor: f.core.actor, Now: f.clock.Now, Step: func(step string) {
		if step == "lease-committed" && theirs == "" {
			theirs = f.seedLock("their-tool-7.json", 7, "s-theirs", int64(os.Getpid()), 5*time.Minute)
		}
	}})
	t.Cleanup(func() { c.Close() })
	_, out, err := c.Run(context.Background(), Request{Action: actionid.Claim, Target: Target{Item: item(7), Session: "s-mine"},
		Params: ClaimParams{PID: strconv.Itoa(os.Getpid()), Role: "author"}}, "")
	if theirs == "" {
		t.Fatal("the claim never reached the step after its lease: the test proves nothing")
	}
	if err != nil || out.Result != ResultRefused || out.Code != CodeClaimedByOther {
		t.Fatalf("claim: %+v %v; want refused %s", out, err, CodeClaimedByOther)
	}
	snap, err := locks.LoadDir(f.ws.LocksDir, locks.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Live) != 1 || snap.Live[0].Name != theirs {
		var names []string
		for _, e := range snap.Live {
			names = append(names, e.Name)
		}
		t.Fatalf("live locks %v; want only %s", names, theirs)
	}
	if ls := f.activeLeases(7); len(ls) != 0 {
		t.Fatalf("%d active leases after the refused claim; want its lease released again", len(ls))
	}
}
