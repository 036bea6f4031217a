package contract

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"steward/leases"
	"steward/leases/leaserec"
	"steward/leases/leasestest"
	"steward/watchdir"
)

// Case is one behaviour of the contract.
type Case struct {
	Name string
	Run  func(t *testing.T, e *Env)
}

// Run runs every case against b, on steward's schema and on a seed-shaped one.
func Run(t *testing.T, b Backend) {
	for _, schema := range []struct {
		name string
		seed bool
	}{{"steward", false}, {"seed", true}} {
		t.Run(schema.name, func(t *testing.T) {
			for _, c := range cases() {
				t.Run(c.Name, func(t *testing.T) { c.Run(t, b.New(t, schema.seed)) })
			}
		})
	}
}

var ctx = context.Background()

func req(session string, n int64) leases.ClaimRequest {
	return leases.ClaimRequest{
		Session:   leases.SessionInfo{SessionID: session, Role: "author", Profile: "prgs-author", PID: 42, Host: "h1"},
		Work:      leasestest.Work(leaserec.KindIssue, n),
		TaskClass: leaserec.ClassAuthorIssueWork, WorktreePath: "/w/" + session, OwnerHost: "h1",
		AllowedActions: []string{"commit", "push"}, Provenance: map[string]any{"source": "contract"},
	}
}

func claim(t *testing.T, e *Env, s leases.Store, r leases.ClaimRequest) *leaserec.Lease {
	t.Helper()
	out, err := s.Claim(ctx, r, e.Now())
	if err != nil || !out.OK() {
		t.Fatalf("claim %s #%d: %+v %v", r.Session.SessionID, r.Work.Number, out, err)
	}
	return out.Lease
}

func want(t *testing.T, what string, out leases.Outcome, err error, code leases.Code) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: error %v", what, err)
	}
	if out.Code != code {
		t.Fatalf("%s: code %s (%s), want %s", what, out.Code, out.Message, code)
	}
	if code != leases.CodeOK && !strings.Contains(out.Message, ";") {
		t.Errorf("%s: refusal message %q does not say what to do instead", what, out.Message)
	}
}

func (e *Env) events(t *testing.T, typ string) int {
	t.Helper()
	return e.Count(`SELECT count(*) FROM events WHERE event_type = ?`, typ)
}

func (e *Env) leaseRow(t *testing.T, id string) leaserec.Lease {
	t.Helper()
	l, ok, err := e.Reader().LeaseByID(ctx, id)
	if err != nil || !ok {
		t.Fatalf("lease %s: found %v, %v", id, ok, err)
	}
	return l
}

// cases is the contract.
func cases() []Case {
	return []Case{
		{"ClaimWritesTheLeaseItsItemSessionAndEvent", func(t *testing.T, e *Env) {
			s := e.Store(leases.StoreOptions{})
			now := e.Now()
			l := claim(t, e, s, req("s1", 1))
			if !l.Status.Active() || l.SessionID != "s1" || l.Work != leasestest.Work(leaserec.KindIssue, 1) {
				t.Fatalf("lease %+v", l)
			}
			if d := l.ExpiresAt.Time.Sub(now); !l.ExpiresAt.OK() || d < 9*time.Minute || d > 11*time.Minute {
				t.Fatalf("expires_at %q is %v after the claim, want the author TTL of 10m", l.ExpiresAt.Raw, d)
			}
			if e.Generation && (!l.HasGeneration || l.Generation != 1) {
				t.Fatalf(
					"the first lease of an item has lease_generation_id %d (recorded %v), want 1",
					l.Generation,
					l.HasGeneration,
				)
			}
			if n := e.events(t, "lease.claim"); n != 1 {
				t.Fatalf("%d lease.claim events", n)
			}
			if n := e.Count(`SELECT count(*) FROM sessions WHERE session_id = 's1'`); n != 1 {
				t.Fatalf("%d session rows", n)
			}
		}},
		{"ClaimRefusals", func(t *testing.T, e *Env) {
			s := e.Store(leases.StoreOptions{})
			l := claim(t, e, s, req("s1", 1))
			out, err := s.Claim(ctx, req("s1", 1), e.Now())
			want(t, "same session again", out, err, leases.CodeAlreadyHeld)
			out, err = s.Claim(ctx, req("s2", 1), e.Now())
			want(t, "other session", out, err, leases.CodeClaimedByOtherSession)
			if out.HolderSessionID != "s1" || out.HolderPastExpiry || out.Lease == nil || out.Lease.LeaseID != l.LeaseID {
				t.Fatalf("refusal names %q past=%v %+v", out.HolderSessionID, out.HolderPastExpiry, out.Lease)
			}
			other := req("s3", 1)
			other.Work.Org, other.Work.Repo = "ACME", "Widgets"
			out, err = s.Claim(ctx, other, e.Now())
			want(t, "the item under another spelling", out, err, leases.CodeClaimedByOtherSession)
			refused := 0
			if !e.Seed {
				refused = 3 // the seed's events record no session: a refusal is not written there
			}
			if n := e.events(t, "claim.refused"); n != refused {
				t.Fatalf("%d claim.refused events, want %d", n, refused)
			}
			bad := req("", 1)
			out, err = s.Claim(ctx, bad, e.Now())
			want(t, "no session", out, err, leases.CodeInvalidRequest)
			if n := e.Count(`SELECT count(*) FROM leases`); n != 1 {
				t.Fatalf("%d lease rows after refusals, want 1", n)
			}
		}},
		{"ClaimNamesAHolderPastExpiry", func(t *testing.T, e *Env) {
			s := e.Store(leases.StoreOptions{})
			r := req("s1", 1)
			r.TTL = -time.Minute
			claim(t, e, s, r)
			out, err := s.Claim(ctx, req("s2", 1), e.Now())
			want(t, "claim over an expired holder", out, err, leases.CodeClaimedByOtherSession)
			if !out.HolderPastExpiry || !strings.Contains(out.Message, "reclaim the expired lease first") {
				t.Fatalf("past=%v %q", out.HolderPastExpiry, out.Message)
			}
		}},
		{"HeartbeatRenewsAndMovesTheGeneration", func(t *testing.T, e *Env) {
			s := e.Store(leases.StoreOptions{})
			claimed := claim(t, e, s, req("s1", 1))
			e.Advance(time.Minute)
			l := ptr(e.leaseRow(t, claimed.LeaseID)) // a fence is read after time passed, as a caller reads it
			out, err := s.Heartbeat(ctx, leases.FenceOf(*l), e.Now())
			want(t, "heartbeat", out, err, leases.CodeOK)
			n := out.Lease
			if !n.ExpiresAt.Time.After(l.ExpiresAt.Time) || n.HeartbeatCount != 1 {
				t.Fatalf("renewed %q (was %q) count %d", n.ExpiresAt.Raw, l.ExpiresAt.Raw, n.HeartbeatCount)
			}
			if e.Generation && n.Generation != l.Generation+1 {
				t.Fatalf("generation %d after a renewal of %d", n.Generation, l.Generation)
			}
			out, err = s.Heartbeat(ctx, leases.FenceOf(*l), e.Now())
			want(t, "heartbeat on the fence read before the renewal", out, err, leases.CodeFenceMoved)
			if e.events(t, "lease.renew") != 1 {
				t.Fatal("the refused heartbeat wrote an event")
			}
		}},
		{"HeartbeatRefusals", func(t *testing.T, e *Env) {
			s := e.Store(leases.StoreOptions{})
			l := claim(t, e, s, req("s1", 1))
			f := leases.FenceOf(*l)
			f.SessionID = "s9"
			out, err := s.Heartbeat(ctx, f, e.Now())
			want(t, "another holder", out, err, leases.CodeFenceMoved)
			f = leases.FenceOf(*l)
			f.ExpiresAt = "2020-01-01T00:00:00.000000Z"
			out, err = s.Heartbeat(ctx, f, e.Now())
			want(t, "another expiry", out, err, leases.CodeFenceMoved)
			f = leases.FenceOf(*l)
			f.Generation += 5
			out, err = s.Heartbeat(ctx, f, e.Now())
			if e.Generation {
				want(t, "another generation", out, err, leases.CodeFenceMoved)
			}
			out, err = s.Heartbeat(ctx, leases.Fence{LeaseID: "lease-none", SessionID: "s1"}, e.Now())
			want(t, "no such lease", out, err, leases.CodeNotFound)
			e.Backdate(l.LeaseID, "created_at", 9*time.Hour)
			l = ptr(e.leaseRow(t, l.LeaseID))
			out, err = s.Heartbeat(ctx, leases.FenceOf(*l), e.Now())
			want(t, "past the absolute cap", out, err, leases.CodeAbsoluteCapReached)
			e.Advance(11 * time.Minute)
			l2 := e.leaseRow(t, l.LeaseID)
			out, err = s.Heartbeat(ctx, leases.FenceOf(l2), e.Now())
			want(t, "past its expiry", out, err, leases.CodeLeaseExpired)
			if e.events(t, "lease.renew") != 0 {
				t.Fatal("a refused heartbeat wrote an event")
			}
		}},
		{"ReleaseAndItsRefusals", func(t *testing.T, e *Env) {
			s := e.Store(leases.StoreOptions{})
			l := claim(t, e, s, req("s1", 1))
			f := leases.FenceOf(*l)
			f.SessionID = "s2"
			out, err := s.Release(ctx, f, "done", e.Now())
			want(t, "release by another session", out, err, leases.CodeFenceMoved)
			out, err = s.Release(ctx, leases.FenceOf(*l), "done", e.Now())
			want(t, "release", out, err, leases.CodeOK)
			if out.Lease.Status != leaserec.StatusReleased {
				t.Fatalf("status %s", out.Lease.Status)
			}
			out, err = s.Release(ctx, leases.FenceOf(*l), "again", e.Now())
			want(t, "release again", out, err, leases.CodeAlreadyReleased)
			if e.events(t, "lease.release") != 1 {
				t.Fatal("release events")
			}
			l2 := claim(t, e, s, req("s2", 1))
			if e.Generation && l2.Generation != l.Generation+1 {
				t.Fatalf("the next lease of the item has generation %d after %d", l2.Generation, l.Generation)
			}
		}},
		{"ReclaimExpiredAndItsRefusals", func(t *testing.T, e *Env) {
			s := e.Store(leases.StoreOptions{})
			l := claim(t, e, s, req("s1", 1))
			f := leases.FenceOf(*l)
			f.ExpiresAt = ""
			out, err := s.ReclaimExpired(ctx, f, "op", e.Now())
			want(t, "unfenced reclaim", out, err, leases.CodeFenceIncomplete)
			out, err = s.ReclaimExpired(ctx, leases.FenceOf(*l), "op", e.Now())
			want(t, "reclaim of a live lease", out, err, leases.CodeNotExpired)
			e.Advance(11 * time.Minute)
			l = ptr(e.leaseRow(t, l.LeaseID))
			out, err = s.ReclaimExpired(ctx, leases.FenceOf(*l), "op", e.Now())
			want(t, "reclaim", out, err, leases.CodeOK)
			if out.Lease.Status != leaserec.StatusExpired || out.Lease.EndReason != "reclaimed" && !e.Seed {
				t.Fatalf("reclaimed lease %s/%s", out.Lease.Status, out.Lease.EndReason)
			}
			out, err = s.ReclaimExpired(ctx, leases.FenceOf(*l), "op", e.Now())
			want(t, "reclaim again", out, err, leases.CodeNotActive)
			if e.events(t, "lease.reclaim") != 1 {
				t.Fatal("reclaim events")
			}
			claim(t, e, s, req("s2", 1))
		}},
		{"ReclaimWaitsForTheExpiryItself", func(t *testing.T, e *Env) {
			// Refused until the recorded expiry, allowed at it (expires_at == now is
			// expired). On PostgreSQL the clock is the server's and runs on while the test
			// works, so "before" is kept 20 s clear of it; on SQLite the instant is exact.
			before := time.Microsecond
			if e.pg {
				before = 20 * time.Second
			}
			s := e.Store(leases.StoreOptions{})
			l := claim(t, e, s, req("s1", 1))
			e.Advance(l.ExpiresAt.Time.Sub(e.Now()) - before)
			l = ptr(e.leaseRow(t, l.LeaseID))
			out, err := s.ReclaimExpired(ctx, leases.FenceOf(*l), "op", e.Now())
			want(t, fmt.Sprintf("reclaim %v before the expiry", before), out, err, leases.CodeNotExpired)
			if n := e.events(t, "lease.reclaim"); n != 0 {
				t.Fatalf("the refused reclaim wrote %d events", n)
			}
			e.Advance(before)
			l = ptr(e.leaseRow(t, l.LeaseID))
			out, err = s.ReclaimExpired(ctx, leases.FenceOf(*l), "op", e.Now())
			want(t, "reclaim at the expiry", out, err, leases.CodeOK)
		}},
		{"AbandonNeedsStaleness", func(t *testing.T, e *Env) {
			s := e.Store(leases.StoreOptions{})
			l := claim(t, e, s, req("s1", 1))
			alive := leaserec.Evidence{Owner: leaserec.ProcessAlive, Worktree: leaserec.WorktreePresent}
			out, err := s.Abandon(ctx, leases.AbandonRequest{Fence: leases.FenceOf(*l), Evidence: alive, Actor: "op"}, e.Now())
			want(t, "abandon of a live lease", out, err, leases.CodeNotStale)
			dead := leaserec.Evidence{Owner: leaserec.ProcessDead, Worktree: leaserec.WorktreePresent}
			out, err = s.Abandon(ctx, leases.AbandonRequest{Fence: leases.FenceOf(*l), Evidence: dead, Actor: "op"}, e.Now())
			want(t, "abandon of a dead owner's lease", out, err, leases.CodeOK)
			if out.Lease.Status != leaserec.StatusAbandoned || out.Freshness == nil || !out.Freshness.Value.Stale() {
				t.Fatalf("abandoned %+v %+v", out.Lease.Status, out.Freshness)
			}
			out, err = s.Abandon(ctx, leases.AbandonRequest{Fence: leases.FenceOf(*l), Evidence: dead, Actor: "op"}, e.Now())
			want(t, "abandon again", out, err, leases.CodeNotActive)
		}},
		{"ExpireSweepEndsOnlyExpiredLeases", func(t *testing.T, e *Env) {
			s := e.Store(leases.StoreOptions{})
			short := req("s1", 1)
			short.TTL = time.Minute
			a := claim(t, e, s, short)
			short = req("s2", 2)
			short.TTL = 2 * time.Minute
			b := claim(t, e, s, short)
			c := claim(t, e, s, req("s3", 3))
			e.Advance(3 * time.Minute)
			// On PostgreSQL a listener hears the sweep (a notice names what it ended); SQLite
			// has no notices: its watcher sees the file change.
			var heard <-chan watchdir.Change
			if e.pg {
				l, err := leases.ListenPG(e.Target, leases.PGListenOptions{})
				if err != nil {
					t.Fatal(err)
				}
				defer l.Close()
				heard = l.Changes()
				<-heard // the first connection's hint
			}
			out, err := s.ExpireSweep(ctx, e.Now())
			want(t, "sweep", out, err, leases.CodeOK)
			if heard != nil {
				select {
				case <-heard:
				case <-time.After(10 * time.Second): // a hang limit, not a measure
					t.Fatal("no notice of the sweep reached a listener")
				}
			}
			got := strings.Join(out.Expired, ",")
			if len(out.Expired) != 2 || !strings.Contains(got, a.LeaseID) || !strings.Contains(got, b.LeaseID) {
				t.Fatalf("expired %v", out.Expired)
			}
			if l := e.leaseRow(t, c.LeaseID); !l.Status.Active() {
				t.Fatalf("the live lease is %s", l.Status)
			}
			if e.events(t, "lease.expire") != 2 || len(out.EventIDs) != 2 || out.EventIDs[0] <= 0 || out.EventIDs[1] <= 0 {
				t.Fatalf("expire events: %d written, the outcome names %v", e.events(t, "lease.expire"), out.EventIDs)
			}
			out, err = s.ExpireSweep(ctx, e.Now())
			want(t, "sweep again", out, err, leases.CodeOK)
			if len(out.Expired) != 0 {
				t.Fatalf("second sweep expired %v", out.Expired)
			}
		}},
		{"ActiveInAnyCaseHoldsTheItem", func(t *testing.T, e *Env) {
			if !e.Seed {
				// steward's own schema admits only the four lower-case statuses: the row a
				// foreign writer could leave on the seed's is refused by the DB itself.
				e.Exec(
					`INSERT INTO work_items (remote, org, repo, work_kind, work_number) ` +
						`VALUES ('prgs', 'acme', 'widgets', 'issue', 1)`,
				)
				if err := e.ExecErr(`INSERT INTO leases (lease_id, work_item_id, session_id, status, created_at)
					VALUES ('L-upper', (SELECT work_item_id FROM work_items), 'sx', ' ACTIVE', ?)`,
					leaserec.FormatTime(e.Now())); err == nil {
					t.Fatal("steward's schema took a lease with status ' ACTIVE'")
				}
				return
			}
			e.Exec(
				`INSERT INTO work_items (remote, org, repo, work_kind, work_number) VALUES ('prgs', 'Acme', 'widgets', 'Issue', 1)`,
			)
			exp := e.Now().Add(5 * time.Minute).UTC().Format(leases.SeedTimeLayout)
			e.Exec(`INSERT INTO leases (lease_id, work_item_id, session_id, status, created_at, expires_at, lease_generation_id)
				VALUES ('L-upper', (SELECT work_item_id FROM work_items), 'sx', ' ACTIVE', ?, ?, 4)`, exp, exp)
			s := e.Store(leases.StoreOptions{})
			out, err := s.Claim(ctx, req("s1", 1), e.Now())
			want(t, "claim over ' ACTIVE'", out, err, leases.CodeClaimedByOtherSession)
			l := e.leaseRow(t, "L-upper")
			out, err = s.Heartbeat(ctx, leases.FenceOf(l), e.Now())
			want(t, "heartbeat of ' ACTIVE'", out, err, leases.CodeOK)
			if out.Lease.Generation != 5 {
				t.Fatalf("generation %d after 4", out.Lease.Generation)
			}
			out, err = s.Release(ctx, leases.FenceOf(*out.Lease), "done", e.Now())
			want(t, "release of ' ACTIVE'", out, err, leases.CodeOK)
			l2 := claim(t, e, s, req("s1", 1))
			if l2.Generation != 6 {
				t.Fatalf("the next claim's generation %d, want 6 (monotonic per item)", l2.Generation)
			}
		}},
		{"ThirtyTwoClaimersOverTwoConnections", func(t *testing.T, e *Env) {
			const workers = 32
			rounds := 10
			var stores [2]leases.Store
			for i := range stores {
				stores[i] = e.Store(leases.StoreOptions{MaxOpenConns: 1})
			}
			r := e.Reader()
			for round := 0; round < rounds; round++ {
				outs := make([]leases.Outcome, workers)
				errs := make([]error, workers)
				var wg sync.WaitGroup
				gate := make(chan struct{})
				for w := 0; w < workers; w++ {
					wg.Add(1)
					go func(w int) {
						defer wg.Done()
						<-gate
						outs[w], errs[w] = stores[w%2].Claim(ctx, req(fmt.Sprintf("sess-%02d", w), 1), e.Now())
					}(w)
				}
				close(gate)
				wg.Wait()
				var winner *leaserec.Lease
				refused := 0
				for w := 0; w < workers; w++ {
					switch {
					case errs[w] != nil:
						t.Fatalf("round %d worker %d: %v", round, w, errs[w])
					case outs[w].OK():
						if winner != nil {
							t.Fatalf("round %d: two winners", round)
						}
						winner = outs[w].Lease
					case outs[w].Code == leases.CodeClaimedByOtherSession:
						refused++
					default:
						t.Fatalf("round %d worker %d: %+v", round, w, outs[w])
					}
				}
				if winner == nil || refused != workers-1 {
					t.Fatalf("round %d: winner %v, %d refused", round, winner != nil, refused)
				}
				live, err := r.LeasesForWorkItem(ctx, leasestest.Work(leaserec.KindIssue, 1))
				if err != nil || len(live) != 1 || live[0].LeaseID != winner.LeaseID {
					t.Fatalf("round %d: live leases %+v %v", round, live, err)
				}
				if e.Generation && winner.Generation != int64(round+1) {
					t.Fatalf("round %d: generation %d", round, winner.Generation)
				}
				out, err := stores[round%2].Release(ctx, leases.FenceOf(*winner), "round over", e.Now())
				want(t, "release", out, err, leases.CodeOK)
			}
			if !e.Seed {
				if n := e.events(t, "claim.refused"); n != rounds*(workers-1) {
					t.Fatalf("%d claim.refused events, want %d", n, rounds*(workers-1))
				}
			}
			if n := e.Count(`SELECT count(*) FROM leases`); n != rounds {
				t.Fatalf("%d lease rows, want %d", n, rounds)
			}
		}},
		{"ReadsSeeWhatTheTransitionsWrote", func(t *testing.T, e *Env) {
			s := e.Store(leases.StoreOptions{})
			a := claim(t, e, s, req("s1", 1))
			b := claim(t, e, s, req("s2", 2))
			out, err := s.Release(ctx, leases.FenceOf(*b), "done", e.Now())
			want(t, "release", out, err, leases.CodeOK)
			r := e.Reader()
			snap, err := r.Snapshot(ctx, leases.ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if snap.LeasesHealth.Status != leaserec.HealthOK || snap.SessionsHealth.Status != leaserec.HealthOK ||
				snap.WorkItemsHealth.Status != leaserec.HealthOK {
				t.Fatalf("health %+v %+v %+v", snap.LeasesHealth, snap.SessionsHealth, snap.WorkItemsHealth)
			}
			if len(snap.Leases) != 2 || len(snap.Sessions) != 2 || len(snap.WorkItems) != 2 {
				t.Fatalf("snapshot: %d leases, %d sessions, %d items", len(snap.Leases), len(snap.Sessions), len(snap.WorkItems))
			}
			if snap.Leases[0].LeaseID != a.LeaseID || snap.Leases[0].ExpiresAt.Raw != a.ExpiresAt.Raw {
				t.Fatalf("the active lease reads %+v, claimed %+v", snap.Leases[0], a)
			}
			sc, err := r.ReadScope(ctx, leases.Scope{WorkItemIDs: []int64{a.WorkItemID}, LeaseIDs: []string{b.LeaseID}})
			if err != nil || len(sc.Leases) != 2 || len(sc.WorkItems) != 2 || len(sc.SessionIDs) != 2 {
				t.Fatalf("scope %+v %v", sc, err)
			}
			hist, err := r.LeaseHistory(ctx, leasestest.Work(leaserec.KindIssue, 2))
			if err != nil || len(hist) != 1 || hist[0].Status != leaserec.StatusReleased {
				t.Fatalf("history %+v %v", hist, err)
			}
			evs, h, err := r.EventsSince(ctx, 0, 0)
			if err != nil || h.Status != leaserec.HealthOK || len(evs) != 3 {
				t.Fatalf("events %d %+v %v", len(evs), h, err)
			}
			back, _, next, err := r.EventsBacklog(ctx, 0, 1)
			if err != nil || len(back) != 1 || next != evs[2].EventID {
				t.Fatalf("backlog %+v next %d %v", back, next, err)
			}
			ops := []leases.Op{
				leases.OpClaim, leases.OpHeartbeat, leases.OpRelease, leases.OpReclaim, leases.OpAbandon, leases.OpSweep,
			}
			for _, op := range ops {
				if v, err := r.Supports(ctx, op); err != nil || !v.OK {
					t.Fatalf("supports %s: %+v %v", op, v, err)
				}
			}
		}},
	}
}

func ptr(l leaserec.Lease) *leaserec.Lease { return &l }
