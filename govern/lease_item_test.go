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

// TestLeasePreviewNamesItsWorkItem: a lease action's preview names the lease's work item
// among its evidence and says what remains once the lease ends: the item's lock files and
// the lease's worktree, untouched. A lease whose work item the DB no longer has (its row
// gone) names none — no "#0" item, and no lock lookup for it: here the lock directory is
// unreadable, and the preview of that lease does not report it — nor a worktree it has not.
func TestLeasePreviewNamesItsWorkItem(t *testing.T) {
	for _, c := range []struct {
		name     string
		orphan   bool
		worktree string
		evidence string   // "" when no evidence line may name a work item
		remains  []string // none: no effect may speak of lock files or a worktree
	}{
		{"a lease on an item", false, "/w/issue-5", "work item acme/widgets#5",
			[]string{"the lock directory could not be read", "remains: the worktree /w/issue-5 is not touched"}},
		{"a lease whose item is gone", true, "", "", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, RoleOperator)
			f.insert(leasestest.Lease{LeaseID: "L1", SessionID: "s-L1", Role: "author", TaskClass: "author_issue_work",
				Work: work(5), CreatedAt: ts(-20 * time.Minute), ExpiresAt: ts(-5 * time.Minute),
				OwnerPID: int64(os.Getpid()), OwnerHost: f.host(), WorktreePath: c.worktree})
			if c.orphan {
				f.exec(`DELETE FROM work_items`)
			}
			if err := os.RemoveAll(f.ws.LocksDir); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(f.ws.LocksDir, []byte("not a directory"), 0o600); err != nil {
				t.Fatal(err)
			}
			pv, err := f.core.Preview(context.Background(), Request{Action: actionid.ReclaimExpired,
				Target: Target{LeaseID: "L1"}})
			if err != nil {
				t.Fatal(err)
			}
			var items []string
			for _, e := range pv.Evidence {
				if strings.HasPrefix(e, "work item ") {
					items = append(items, e)
				}
			}
			if c.evidence == "" && len(items) != 0 || c.evidence != "" && (len(items) != 1 || items[0] != c.evidence) {
				t.Errorf("evidence naming a work item %q, want %q", items, c.evidence)
			}
			effects := strings.Join(pv.Effects, "\n")
			if len(c.remains) == 0 && (strings.Contains(effects, "lock") || strings.Contains(effects, "worktree")) {
				t.Errorf("effects %q speak of locks or a worktree", pv.Effects)
			}
			for _, r := range c.remains {
				if !strings.Contains(effects, r) {
					t.Errorf("effects %q, want %q", pv.Effects, r)
				}
			}
		})
	}
}

// TestLeaseActionsReportWhatTheyDid: a reclaim, an abandon and a sweep that end the lease
// report what they did — the effects their preview promised, the sweep the leases it
// expired — and the lease has ended as they say.
func TestLeaseActionsReportWhatTheyDid(t *testing.T) {
	for _, c := range []struct {
		name    string
		setup   func(f *fixture) Request
		effects []string // nil: the preview's
		detail  string   // the sweep's "expired"
		status  string
	}{
		{"reclaim", func(f *fixture) Request {
			f.expiredLease("L1", 5)
			return Request{Action: actionid.ReclaimExpired, Target: Target{LeaseID: "L1"}}
		}, nil, "", "expired"},
		{"abandon", func(f *fixture) Request {
			f.insert(leasestest.Lease{LeaseID: "L1", SessionID: "s-L1", Role: "author", TaskClass: "author_issue_work",
				Work: work(5), CreatedAt: ts(-20 * time.Minute), ExpiresAt: ts(time.Hour), OwnerPID: deadPID(f.t),
				OwnerHost: f.host()})
			return Request{Action: actionid.AbandonStale, Target: Target{LeaseID: "L1"}}
		}, nil, "", "abandoned"},
		{"expire sweep", func(f *fixture) Request {
			f.expiredLease("L1", 5)
			f.insert(leasestest.Lease{LeaseID: "L0", SessionID: "s-L0", Role: "author", TaskClass: "author_issue_work",
				Work: work(4), Status: "released", CreatedAt: ts(-time.Hour), ExpiresAt: ts(-30 * time.Minute)})
			return Request{Action: actionid.ExpireSweep}
		}, []string{"lease L1: active → expired"}, "L1", "expired"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, RoleOperator)
			pv, err := f.core.Preview(context.Background(), c.setup(f))
			if err != nil || !pv.Allowed {
				t.Fatalf("preview: %+v %v", pv.Refusal, err)
			}
			// The sweep reads the active leases only: the released one is not among them.
			if c.detail != "" && (len(pv.Evidence) == 0 || !strings.HasPrefix(pv.Evidence[0], "1 active leases read, 1 past expiry")) {
				t.Errorf("sweep evidence %q, want 1 active lease read", pv.Evidence)
			}
			want := c.effects
			if want == nil {
				want = pv.Effects
			}
			out := f.core.Apply(context.Background(), pv, pv.ConfirmPhrase)
			if out.Result != ResultSucceeded || len(out.Effects) == 0 || strings.Join(out.Effects, "\n") != strings.Join(want, "\n") ||
				out.Detail["expired"] != c.detail {
				t.Fatalf("%s: %+v, want succeeded with the effects %q", c.name, out, want)
			}
			if l := f.lease("L1"); string(l.Status) != c.status {
				t.Errorf("lease after the %s: %s, want %s", c.name, l.Status, c.status)
			}
		})
	}
}

// TestVerifyReadsEveryEvent: an interrupted lease transition — a reclaim, a sweep, a
// worker's release — is settled from its own event in the DB, found however many events came
// before it: here 5000 others, a whole page of the verifier's read, so the attempt's event is
// on the next page.
func TestVerifyReadsEveryEvent(t *testing.T) {
	for _, c := range []struct {
		name  string
		setup func(f *fixture) Request
	}{
		{"reclaim", func(f *fixture) Request {
			f.expiredLease("L1", 5)
			return Request{Action: actionid.ReclaimExpired, Target: Target{LeaseID: "L1"}}
		}},
		{"expire sweep", func(f *fixture) Request {
			f.expiredLease("L1", 5)
			return Request{Action: actionid.ExpireSweep}
		}},
		{"a worker's release", func(f *fixture) Request {
			lease := f.claim("s1", 5).Detail["lease_id"]
			return Request{Action: actionid.Release, Target: Target{LeaseID: lease, Session: "s1"}}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, RoleOperator)
			req := c.setup(f)
			var before int
			if err := f.db().QueryRow(`SELECT count(*) FROM events`).Scan(&before); err != nil {
				t.Fatal(err)
			}
			f.exec(`INSERT INTO events (event_type, message, created_at)
				WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ?)
				SELECT 'note', 'an earlier event', ? FROM c`, 5000-before, ts(-time.Hour))
			_, out, err := f.core.Run(context.Background(), req, "")
			if err != nil || out.Result != ResultSucceeded {
				t.Fatalf("%s: %+v %v", req.Action, out, err)
			}
			var intent Record
			for _, r := range f.records() {
				if r.Attempt == out.Attempt && r.Kind == KindIntent {
					intent = r
				}
			}
			if res, ev, ok := f.core.actions[req.Action].verify(context.Background(), f.core, intent); !ok ||
				res != ResultSucceeded {
				t.Fatalf("verify of the %s: %s %v settled=%v, want succeeded", req.Action, res, ev, ok)
			}
		})
	}
}
