package govern

import (
	"context"
	"steward/govern/actionid"
	"strings"
	"testing"
)

// TestReleaseAgainIsAlreadyReleased: a worker repeating its own release (a retry after a
// lost response, a cleanup script) gets success — "already released", nothing changed, one
// outcome record and no intent — where it got refused already_released and a worker script
// read a failure. Only its own released lease: another session is refused
// not_owner, a lease that ended otherwise (expired, reclaimed) stays refused, and so does a
// release stopped before its lock was archived (the leftover lock must be seen).
func TestReleaseAgainIsAlreadyReleased(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, RoleOperator)
	lease := f.claim("s1", 7).Detail["lease_id"]
	rel := Request{Action: actionid.Release, Target: Target{LeaseID: lease, Session: "s1"}}
	if _, out, err := f.core.Run(ctx, rel, ""); err != nil || out.Result != ResultSucceeded || out.Disposition != dispositionApplied {
		t.Fatalf("first release: %v %+v", err, out)
	}
	before := f.state()
	pv, err := f.core.Preview(ctx, rel)
	if err != nil || !pv.Allowed || len(pv.Effects) != 1 || !strings.HasPrefix(pv.Effects[0], "nothing: already released") {
		t.Fatalf("preview of a second release: %v allowed=%v refusal=%+v effects=%q", err, pv.Allowed, pv.Refusal, pv.Effects)
	}
	out := f.core.Apply(ctx, pv, "")
	if out.Result != ResultSucceeded || out.Disposition != DispositionNotAttempted || !strings.HasPrefix(out.Message, "already released") {
		t.Fatalf("second release: %+v", out)
	}
	if after := f.state(); strings.Count(after, "\n") == 0 || stripAudit(after) != stripAudit(before) {
		t.Fatalf("a second release changed a source:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	assertOneTerminal(t, f, out.Attempt)
	for _, r := range f.records() {
		if r.Attempt == out.Attempt && r.Kind == KindIntent {
			t.Fatalf("a release that changes nothing wrote an intent: %+v", r)
		}
	}
	if _, out, _ := f.core.Run(ctx, Request{Action: actionid.Release, Target: Target{LeaseID: lease, Session: "s2"}}, ""); out.Code != CodeNotOwner {
		t.Fatalf("another session releasing a released lease: %+v, want not_owner", out)
	}

	// A lease that ended otherwise is not the worker's to call released.
	other := f.claim("s1", 8).Detail["lease_id"]
	f.exec("UPDATE leases SET status = 'expired' WHERE lease_id = ?", other)
	if _, out, _ := f.core.Run(ctx, Request{Action: actionid.Release, Target: Target{LeaseID: other, Session: "s1"}}, ""); out.Result != ResultRefused || out.Code != "not_active" {
		t.Fatalf("release of an expired lease: %+v, want refused not_active", out)
	}
	// Released in the DB with its lock still live: refused, so the lock is seen.
	half := f.claim("s1", 9).Detail["lease_id"]
	f.exec("UPDATE leases SET status = 'released' WHERE lease_id = ?", half)
	if _, out, _ := f.core.Run(ctx, Request{Action: actionid.Release, Target: Target{LeaseID: half, Session: "s1"}}, ""); out.Result != ResultRefused || out.Code != codeAlreadyReleased {
		t.Fatalf("release with its lock still live: %+v, want refused already_released", out)
	}
}

// stripAudit drops the audit log's lines from a fixture state: the second release records
// its outcome, and nothing else may move.
func stripAudit(state string) string {
	var keep []string
	for _, l := range strings.Split(state, "\n") {
		if !strings.Contains(l, "audit") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}
