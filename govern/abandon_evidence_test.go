package govern

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"steward/govern/actionid"
	"steward/leases/leasestest"
)

// TestAbandonPreviewShowsItsEvidence: an abandon's preview shows what it judged — the
// freshness and its reasons, the owner's process and the host it is judged on (why that host,
// when the row records none) — and an abandon judged stale by this host's clock (its
// absolute cap reached) is refused clock_untrusted when the lease holds a time in this host's
// future, while one judged stale by a dead owner does not rest on the clock and is allowed.
func TestAbandonPreviewShowsItsEvidence(t *testing.T) {
	for _, c := range []struct {
		name      string
		created   time.Duration
		pid       func(t *testing.T) int64
		host      bool // the row records its host
		refused   string
		freshness string
		hostWhy   bool
	}{
		{"stale by its absolute cap", -9 * time.Hour, func(*testing.T) int64 { return int64(os.Getpid()) }, true,
			codeClockUntrusted, "freshness: stale_absolute_cap", false},
		{"stale by a dead owner", -20 * time.Minute, deadPID, false, "", "freshness: stale_dead_process", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, RoleOperator)
			host := ""
			if c.host {
				host = f.host()
			}
			// A heartbeat stamped a minute in this host's future: another clock wrote it.
			f.insert(leasestest.Lease{LeaseID: "L1", SessionID: "s-L1", Role: "author", TaskClass: "author_issue_work",
				Work: work(5), CreatedAt: ts(c.created), ExpiresAt: ts(time.Hour), LastHeartbeatAt: ts(time.Minute),
				OwnerPID: c.pid(t), OwnerHost: host})
			pv, err := f.core.Preview(context.Background(), Request{Action: actionid.AbandonStale, Target: Target{LeaseID: "L1"}})
			if err != nil {
				t.Fatal(err)
			}
			code := ""
			if pv.Refusal != nil {
				code = pv.Refusal.Code
			}
			if code != c.refused {
				t.Errorf("refusal %+v, want %q", pv.Refusal, c.refused)
			}
			evidence := strings.Join(pv.Evidence, "\n")
			if !strings.Contains(evidence, c.freshness+"\n") {
				t.Errorf("evidence %q does not say %q", pv.Evidence, c.freshness)
			}
			owner := ""
			for _, e := range pv.Evidence {
				if strings.HasPrefix(e, "owner pid ") {
					owner = e
				}
			}
			if why := strings.HasSuffix(owner, "(no host recorded: judged on this host, where the DB is (the seed's "+
				"control plane is single-host))"); why != c.hostWhy || strings.Contains(owner, "()") {
				t.Errorf("owner evidence %q: says why it is judged on this host: %v, want %v", owner, why, c.hostWhy)
			}
		})
	}
}
