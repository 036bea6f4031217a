package govern

import (
	"context"
	"strings"
	"testing"

	"steward/govern/actionid"
	"steward/leases/leaserec"
	"steward/leases/pgtest/pgproxy"
)

// proxiedCore is a core acting as "faulted" on f's workspace with its DB connection through
// a new proxy in front of f's PostgreSQL database.
func proxiedCore(t *testing.T, f *fixture) (*pgproxy.Proxy, *Core) {
	t.Helper()
	px := pgproxy.Start(t, f.ws.DBPath)
	ws := f.ws
	ws.DBPath = px.URL()
	c := New(ws, f.audit, Options{Actor: Actor{OSUser: "faulted", Host: ws.Host, Role: RoleOperator}, Now: f.clock.Now})
	t.Cleanup(func() { c.Close() })
	return px, c
}

// commitOfWrites matches the COMMIT of a transaction that wrote.
func commitOfWrites(s pgproxy.Statement) bool { return s.IsCommit() && s.TxWrote }

// attemptOf returns attempt id's record set from the audit log.
func (f *fixture) attempt(id string) Attempt {
	f.t.Helper()
	for _, a := range Attempts(f.records()) {
		if a.ID == id {
			return a
		}
	}
	f.t.Fatalf("attempt %s is not in the audit log", id)
	return Attempt{}
}

// TestLostCommitReplyIsUnknown: on PostgreSQL, a claim and a release whose COMMIT reached
// the server and whose answer was lost (the proxy forwards the COMMIT and closes the
// client's connection) are recorded unknown / outcome_unknown — never failed — while the
// DB holds what they committed; `audit verify` then reads the attempt's mark back and
// says what is there: the claim's lease without its lock, the release's lease released
// with its lock still live (the partial states a human finishes, as after a crash), never
// "failed". A cut before the COMMIT is sent is unknown too, and verify settles it failed
// from the mark's absence; a reclaim's lost answer settles succeeded.
//
// Before the fix the store's errors were plain failures: the claim and the release were
// recorded failed / not_attempted and verify found nothing unknown.
func TestLostCommitReplyIsUnknown(t *testing.T) {
	ctx := context.Background()
	f := newFixtureOn(t, RoleOperator, "postgres")
	px, c := proxiedCore(t, f)

	// The claim: COMMIT forwarded, answer lost.
	fault := px.Arm(pgproxy.Cut{Match: commitOfWrites, N: 1, When: pgproxy.ReplyLost})
	claim := applyThrough(t, c, Request{Action: actionid.Claim, Target: Target{Item: item(7), Session: "s1"}, Params: ClaimParams{Role: "author"}})
	<-fault.Done()
	if claim.Result != ResultUnknown || claim.Disposition != DispositionOutcomeUnknown || !strings.Contains(claim.Message, "verify before retrying") {
		t.Fatalf("claim with its COMMIT's answer lost: %+v", claim)
	}
	if a := f.attempt(claim.Attempt); a.Outcome == nil || a.Outcome.Result != ResultUnknown || a.Outcome.Disposition != DispositionOutcomeUnknown {
		t.Fatalf("the audit log records %+v", a.Outcome)
	}
	active := f.activeLeases(7)
	if len(active) != 1 || active[0].SessionID != "s1" {
		t.Fatalf("the COMMIT reached the server: the lease must be there: %+v", active)
	}
	vs, err := c.Verify(ctx)
	if err != nil || len(vs) != 1 || vs[0].Result != ResultUnknown || !strings.Contains(strings.Join(vs[0].Evidence, " "), "active but its lock file is missing") {
		t.Fatalf("verify of the claim: %+v %v", vs, err)
	}

	// The worker follows the evidence: release, claim again (straight to the server).
	f.runOK(t, Request{Action: actionid.Release, Target: Target{LeaseID: active[0].LeaseID, Session: "s1"}})
	lease := f.claim("s1", 7).Detail["lease_id"]

	// The release: COMMIT forwarded, answer lost.
	fault = px.Arm(pgproxy.Cut{Match: commitOfWrites, N: 1, When: pgproxy.ReplyLost})
	rel := applyThrough(t, c, Request{Action: actionid.Release, Target: Target{LeaseID: lease, Session: "s1"}})
	<-fault.Done()
	if rel.Result != ResultUnknown || rel.Disposition != DispositionOutcomeUnknown {
		t.Fatalf("release with its COMMIT's answer lost: %+v", rel)
	}
	if l := f.lease(lease); l.Status != leaserec.StatusReleased {
		t.Fatalf("the COMMIT reached the server: the lease must be released, is %s", l.Status)
	}
	vs, err = c.Verify(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var relV *Verification
	for i := range vs {
		if vs[i].Attempt == rel.Attempt {
			relV = &vs[i]
		}
	}
	if relV == nil || relV.Result != ResultUnknown || !strings.Contains(strings.Join(relV.Evidence, " "), "released by this attempt but its lock") {
		t.Fatalf("verify of the release: %+v", vs)
	}

	// A claim cut before its COMMIT was sent: unknown, and verify settles it failed.
	f.expiredLease("L1", 1)
	fault = px.Arm(pgproxy.Cut{Match: commitOfWrites, N: 1, When: pgproxy.Before})
	claim2 := applyThrough(t, c, Request{Action: actionid.Claim, Target: Target{Item: item(9), Session: "s2"}, Params: ClaimParams{Role: "author"}})
	<-fault.Done()
	if claim2.Result != ResultUnknown || len(f.activeLeases(9)) != 0 {
		t.Fatalf("claim cut before its COMMIT: %+v, %d active leases", claim2, len(f.activeLeases(9)))
	}
	// And a reclaim whose COMMIT's answer was lost: unknown, settled succeeded.
	fault = px.Arm(pgproxy.Cut{Match: commitOfWrites, N: 1, When: pgproxy.ReplyLost})
	reclaim := applyThrough(t, c, Request{Action: actionid.ReclaimExpired, Target: Target{LeaseID: "L1"}})
	<-fault.Done()
	if reclaim.Result != ResultUnknown {
		t.Fatalf("reclaim with its COMMIT's answer lost: %+v", reclaim)
	}
	if _, err := c.Verify(ctx); err != nil {
		t.Fatal(err)
	}
	if s := f.attempt(claim2.Attempt).Status(); s != ResultFailed {
		t.Fatalf("the claim cut before its COMMIT is %s after verify, want failed", s)
	}
	if s := f.attempt(reclaim.Attempt).Status(); s != ResultSucceeded {
		t.Fatalf("the reclaim whose answer was lost is %s after verify, want succeeded", s)
	}
}

// TestVerifyWaitsForTheServersTransaction: a client that gave up on its COMMIT's answer
// leaves the server's session running, and the COMMIT may still be on its way. While the
// server is still inside the attempt's transaction, `audit verify` leaves the attempt
// alone and says which server process holds it; once that transaction has committed,
// verify settles the attempt succeeded. Without the check, verify read the lease
// untouched, settled the reclaim failed — and the COMMIT then landed: a failed record of
// an effect that took place.
func TestVerifyWaitsForTheServersTransaction(t *testing.T) {
	ctx := context.Background()
	f := newFixtureOn(t, RoleOperator, "postgres")
	f.expiredLease("L1", 1)
	px, c := proxiedCore(t, f)
	fault := px.Arm(pgproxy.Cut{Match: commitOfWrites, N: 1, When: pgproxy.Hold})
	out := applyThrough(t, c, Request{Action: actionid.ReclaimExpired, Target: Target{LeaseID: "L1"}})
	if out.Result != ResultUnknown {
		t.Fatalf("reclaim whose connection broke at its COMMIT: %+v", out)
	}
	if l := f.lease("L1"); l.Status != leaserec.StatusActive {
		t.Fatalf("the COMMIT is held by the proxy: the lease must still be active, is %s", l.Status)
	}
	vs, err := c.Verify(ctx)
	if err != nil || len(vs) != 1 || vs[0].Result != ResultUnknown || !strings.Contains(vs[0].Note, "still running this attempt's transaction") {
		t.Fatalf("verify while the server still runs the transaction: %+v %v", vs, err)
	}
	if s := f.attempt(out.Attempt).Status(); s != ResultUnknown {
		t.Fatalf("the attempt is %s while its COMMIT is on its way", s)
	}
	fault.Release()
	<-fault.Done()
	if l := f.lease("L1"); l.Status != leaserec.StatusExpired {
		t.Fatalf("the COMMIT landed: the lease must be reclaimed, is %s", l.Status)
	}
	if vs, err = c.Verify(ctx); err != nil || len(vs) != 1 || vs[0].Result != ResultSucceeded {
		t.Fatalf("verify once the transaction ended: %+v %v", vs, err)
	}
}

// TestSQLiteCommitErrorIsUnknown: on SQLite a transition's COMMIT that fails (here its
// writes to the WAL exceed the file size limit, set in the child process for the COMMIT
// alone) may have taken effect — a COMMIT can fail after the commit record was written —
// so the claim and the release are recorded unknown / outcome_unknown, never failed, and
// `audit verify` settles each from the attempt's mark: no lease carries the claim's, no
// lease.release event the release's, and the lease is as it was, so both failed. Before
// the fix the COMMIT's error was a plain failure, recorded failed / not_attempted.
func TestSQLiteCommitErrorIsUnknown(t *testing.T) {
	f := newFixture(t, RoleOperator)
	run := func(env ...string) Attempt {
		t.Helper()
		out, err := f.child("commit-fails", env...).Output()
		if err != nil || !strings.Contains(string(out), "result unknown") {
			t.Fatalf("the child: %v\n%s", err, out)
		}
		atts := Attempts(f.records())
		a := atts[len(atts)-1]
		if a.Outcome == nil || a.Outcome.Result != ResultUnknown || a.Outcome.Disposition != DispositionOutcomeUnknown ||
			!strings.Contains(a.Outcome.Message, "verify before retrying") {
			t.Fatalf("the audit log records %+v", a.Outcome)
		}
		t.Logf("%s: %s", a.Outcome.Action, a.Outcome.Message)
		return a
	}
	claim := run("CHILD_ACTION="+actionid.Claim, "CHILD_ITEM=7")
	if n := len(f.activeLeases(7)); n != 0 {
		t.Fatalf("the failed COMMIT left %d active leases", n)
	}
	lease := f.claim("s-child", 8).Detail["lease_id"]
	rel := run("CHILD_ACTION="+actionid.Release, "CHILD_LEASE="+lease, "CHILD_SESSION=s-child")
	if l := f.lease(lease); l.Status != leaserec.StatusActive {
		t.Fatalf("the failed COMMIT released the lease: %s", l.Status)
	}
	if _, err := f.core.Verify(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, a := range []Attempt{claim, rel} {
		if got := f.attempt(a.ID); got.Status() != ResultFailed {
			t.Fatalf("%s after verify: %s (%+v)", a.Intent.Action, got.Status(), got.Resolutions)
		}
	}
}
