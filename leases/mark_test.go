package leases_test

import (
	"context"
	"testing"
	"time"

	"steward/leases"
	"steward/leases/leaserec"
)

// TestEventsNameTheirAttempt: every event a transition writes under a context carrying a
// governed attempt names it (what audit verify looks for), its detail otherwise whole;
// without one, none does.
func TestEventsNameTheirAttempt(t *testing.T) {
	path, s := newStore(t, leases.StoreOptions{})
	ctx := leases.WithAttempt(context.Background(), "att-1")
	out, err := s.Claim(ctx, claimReq("s1", 1), now)
	if err != nil || !out.OK() {
		t.Fatalf("claim: %+v %v", out, err)
	}
	if o, err := s.Heartbeat(leases.WithAttempt(context.Background(), "att-2"), leases.FenceOf(*out.Lease), now.Add(time.Minute)); err != nil || !o.OK() {
		t.Fatalf("heartbeat: %+v %v", o, err)
	}
	l2 := mustClaim(t, s, "s2", 2, now) // no attempt
	if o, err := s.Release(context.Background(), leases.FenceOf(*l2), "", now); err != nil || !o.OK() {
		t.Fatalf("release: %+v %v", o, err)
	}
	for typ, want := range map[string][]string{"lease.claim": {"att-1", ""}, "lease.renew": {"att-2"}, "lease.release": {""}} {
		evs := events(t, path, typ)
		if len(evs) != len(want) {
			t.Fatalf("%s: %d events, want %d", typ, len(evs), len(want))
		}
		for i, e := range evs {
			got, _ := e.Detail[leaserec.DetailAttempt].(string)
			if got != want[i] {
				t.Errorf("%s #%d names attempt %q, want %q (detail %s)", typ, i, got, want[i], e.DetailRaw)
			}
			// The attempt is added to the event's own detail, which keeps what it says.
			if id, _ := e.Detail["lease_id"].(string); id == "" {
				t.Errorf("%s #%d: detail %s names no lease", typ, i, e.DetailRaw)
			}
		}
	}
	if leases.AttemptOf(context.Background()) != "" || leases.AttemptOf(leases.WithAttempt(context.Background(), "")) != "" {
		t.Error("an attempt from nowhere")
	}
}
