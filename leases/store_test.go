package leases_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"steward/leases"
	"steward/leases/leaserec"
	"steward/leases/leasestest"
)

var now = leasestest.Now

func newStore(t testing.TB, opt leases.StoreOptions) (string, leases.Store) {
	t.Helper()
	path := leasestest.NewDB(t, nil, nil)
	s, err := leases.OpenReadWrite(path, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return path, s
}

func claimReq(session string, n int64) leases.ClaimRequest {
	return leases.ClaimRequest{
		Session:   leases.SessionInfo{SessionID: session, Role: "author", Profile: "prgs-author", PID: 42, Host: "h1"},
		Work:      leasestest.Work(leaserec.KindIssue, n),
		TaskClass: leaserec.ClassAuthorIssueWork, WorktreePath: "/w/" + session,
		AllowedActions: []string{"commit", "push"}, Provenance: map[string]any{"source": "test"},
	}
}

func mustClaim(t *testing.T, s leases.Store, session string, n int64, at time.Time) *leaserec.Lease {
	t.Helper()
	out, err := s.Claim(context.Background(), claimReq(session, n), at)
	if err != nil || !out.OK() {
		t.Fatalf("claim: %+v %v", out, err)
	}
	return out.Lease
}

func events(t *testing.T, path string, typ string) []leaserec.Event {
	t.Helper()
	r, err := leases.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ev, _, err := r.EventsSince(context.Background(), 0, 100000)
	if err != nil {
		t.Fatal(err)
	}
	var out []leaserec.Event
	for _, e := range ev {
		if e.EventType == typ {
			out = append(out, e)
		}
	}
	return out
}

func TestClaim(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path, s := newStore(t, leases.StoreOptions{})
	l := mustClaim(t, s, "sess-a", 7, now)
	if l.Status != leaserec.StatusActive || l.SessionID != "sess-a" || l.Phase != leaserec.PhaseAllocated ||
		l.TaskClass != leaserec.ClassAuthorIssueWork || !l.ExpiresAt.Time.Equal(now.Add(10*time.Minute)) ||
		l.Work.Number != 7 || len(l.AllowedActions) != 2 || l.Provenance["source"] != "test" || len(l.Problems) != 0 {
		t.Fatalf("lease %+v", l)
	}
	if got := events(t, path, "lease.claim"); len(got) != 1 || got[0].SessionID != "sess-a" {
		t.Fatalf("claim events %+v", got)
	}

	out, err := s.Claim(ctx, claimReq("sess-b", 7), now.Add(time.Minute))
	if err != nil || out.Code != leases.CodeClaimedByOtherSession || out.HolderSessionID != "sess-a" || out.HolderPastExpiry {
		t.Fatalf("second claim %+v %v", out, err)
	}
	ref := events(t, path, "claim.refused")
	if len(ref) != 1 || ref[0].SessionID != "sess-b" || ref[0].Detail["holding_session_id"] != "sess-a" ||
		ref[0].Detail["requesting_session_id"] != "sess-b" || ref[0].WorkItemID != l.WorkItemID {
		t.Fatalf("refused event %+v", ref)
	}

	out, _ = s.Claim(ctx, claimReq("sess-b", 7), now.Add(11*time.Minute))
	if out.Code != leases.CodeClaimedByOtherSession || !out.HolderPastExpiry {
		t.Fatalf("expired holder must still block and say so: %+v", out)
	}
	out, _ = s.Claim(ctx, claimReq("sess-a", 7), now.Add(time.Minute))
	if out.Code != leases.CodeAlreadyHeld {
		t.Fatalf("same session: %+v", out)
	}
	bad := claimReq("", 0)
	if out, err := s.Claim(ctx, bad, now); err != nil || out.Code != leases.CodeInvalidRequest {
		t.Fatalf("invalid: %+v %v", out, err)
	}
	// A different item is independent.
	mustClaim(t, s, "sess-b", 8, now)
}

func TestConflictFixTTLAndNegativeTTL(t *testing.T) {
	t.Parallel()
	_, s := newStore(t, leases.StoreOptions{})
	req := claimReq("s", 1)
	req.TaskClass = leaserec.ClassConflictFix
	out, _ := s.Claim(context.Background(), req, now)
	if !out.Lease.ExpiresAt.Time.Equal(now.Add(120 * time.Minute)) {
		t.Fatalf("conflict fix ttl %v", out.Lease.ExpiresAt)
	}
	req = claimReq("s", 2)
	req.TTL = -time.Minute
	out, _ = s.Claim(context.Background(), req, now)
	if !out.Lease.ExpiresAt.Time.Equal(now.Add(-time.Minute)) {
		t.Fatalf("negative ttl %v", out.Lease.ExpiresAt)
	}
}

func TestHeartbeat(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path, s := newStore(t, leases.StoreOptions{})
	l := mustClaim(t, s, "sess-a", 1, now)
	at := now.Add(3 * time.Minute)
	out, err := s.Heartbeat(ctx, leases.FenceOf(*l), at)
	if err != nil || !out.OK() || out.Lease.HeartbeatCount != 1 || !out.Lease.ExpiresAt.Time.Equal(at.Add(10*time.Minute)) ||
		!out.Lease.LastHeartbeatAt.Time.Equal(at) {
		t.Fatalf("heartbeat %+v %v", out, err)
	}
	if len(events(t, path, "lease.renew")) != 1 {
		t.Fatal("no lease.renew event")
	}
	cases := []struct {
		name string
		f    leases.Fence
		at   time.Time
		code leases.Code
	}{
		{"stale fence expiry", leases.FenceOf(*l), at, leases.CodeFenceMoved},
		{"other session", leases.Fence{LeaseID: l.LeaseID, SessionID: "intruder"}, at, leases.CodeFenceMoved},
		{"unknown lease", leases.Fence{LeaseID: "nope", SessionID: "sess-a"}, at, leases.CodeNotFound},
		{"expired", leases.FenceOf(*out.Lease), at.Add(10 * time.Minute), leases.CodeLeaseExpired},
	}
	for _, c := range cases {
		got, err := s.Heartbeat(ctx, c.f, c.at)
		if err != nil || got.Code != c.code {
			t.Errorf("%s: %+v %v", c.name, got, err)
		}
	}
	// Absolute cap: a lease created 8h ago cannot be renewed; one close to
	// the cap is renewed only up to it.
	p2 := leasestest.NewDB(t, nil, []leasestest.Lease{
		{LeaseID: "old", SessionID: "s", Work: leasestest.Work(leaserec.KindIssue, 2), TaskClass: leaserec.ClassAuthorIssueWork,
			CreatedAt: leaserec.FormatTime(now.Add(-8 * time.Hour)), ExpiresAt: leaserec.FormatTime(now.Add(time.Minute))},
		{LeaseID: "near", SessionID: "s", Work: leasestest.Work(leaserec.KindIssue, 3), TaskClass: leaserec.ClassAuthorIssueWork,
			CreatedAt: leaserec.FormatTime(now.Add(-8*time.Hour + 4*time.Minute)), ExpiresAt: leaserec.FormatTime(now.Add(time.Minute))},
		{LeaseID: "noexp", SessionID: "s", Work: leasestest.Work(leaserec.KindIssue, 4), TaskClass: leaserec.ClassReviewerPR},
	})
	s2, err := leases.OpenReadWrite(p2, leases.StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if got, _ := s2.Heartbeat(ctx, leases.Fence{LeaseID: "old", SessionID: "s"}, now); got.Code != leases.CodeAbsoluteCapReached {
		t.Errorf("cap: %+v", got)
	}
	got, _ := s2.Heartbeat(ctx, leases.Fence{LeaseID: "near", SessionID: "s"}, now)
	if !got.OK() || !got.Lease.ExpiresAt.Time.Equal(now.Add(4*time.Minute)) {
		t.Errorf("capped renew: %+v", got)
	}
	got, _ = s2.Heartbeat(ctx, leases.Fence{LeaseID: "noexp", SessionID: "s"}, now)
	if !got.OK() || !got.Lease.ExpiresAt.Time.Equal(now.Add(10*time.Minute)) {
		t.Errorf("missing expiry repaired by heartbeat: %+v", got)
	}
}

func TestRelease(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path, s := newStore(t, leases.StoreOptions{})
	l := mustClaim(t, s, "sess-a", 1, now)
	if got, _ := s.Release(ctx, leases.Fence{LeaseID: l.LeaseID, SessionID: "other"}, "", now); got.Code != leases.CodeFenceMoved {
		t.Fatalf("foreign release: %+v", got)
	}
	got, err := s.Release(ctx, leases.FenceOf(*l), "done", now.Add(time.Minute))
	if err != nil || !got.OK() || got.Lease.Status != leaserec.StatusReleased || got.Lease.EndReason != "done" ||
		!got.Lease.ReleasedAt.Time.Equal(now.Add(time.Minute)) {
		t.Fatalf("release: %+v %v", got, err)
	}
	if got, _ := s.Release(ctx, leases.FenceOf(*l), "", now); got.Code != leases.CodeAlreadyReleased {
		t.Fatalf("double release: %+v", got)
	}
	if len(events(t, path, "lease.release")) != 1 {
		t.Fatal("release event")
	}
	mustClaim(t, s, "sess-b", 1, now.Add(2*time.Minute)) // item free again
}

func TestReclaimExpired(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path, s := newStore(t, leases.StoreOptions{})
	l := mustClaim(t, s, "sess-a", 1, now)
	f := leases.FenceOf(*l)
	cases := []struct {
		name string
		f    leases.Fence
		at   time.Time
		code leases.Code
	}{
		{"not expired", f, now.Add(time.Minute), leases.CodeNotExpired},
		{"no expiry in fence", leases.Fence{LeaseID: l.LeaseID, SessionID: "sess-a"}, now.Add(time.Hour), leases.CodeFenceIncomplete},
		{"expiry moved", leases.Fence{LeaseID: l.LeaseID, SessionID: "sess-a", ExpiresAt: "2026-01-01T00:00:00Z"}, now.Add(time.Hour), leases.CodeFenceMoved},
		{"holder moved", leases.Fence{LeaseID: l.LeaseID, SessionID: "x", ExpiresAt: f.ExpiresAt}, now.Add(time.Hour), leases.CodeFenceMoved},
		{"missing", leases.Fence{LeaseID: "zz", SessionID: "x", ExpiresAt: f.ExpiresAt}, now.Add(time.Hour), leases.CodeNotFound},
	}
	for _, c := range cases {
		if got, err := s.ReclaimExpired(ctx, c.f, "sess-b", c.at); err != nil || got.Code != c.code {
			t.Errorf("%s: %+v %v", c.name, got, err)
		}
	}
	// Preview and apply agree: the pure guard says OK exactly at expiry.
	if v := leases.CheckReclaimExpired(l, f, l.ExpiresAt.Time); !v.OK {
		t.Fatalf("preview refused: %+v", v)
	}
	got, err := s.ReclaimExpired(ctx, f, "sess-b", l.ExpiresAt.Time)
	if err != nil || !got.OK() || got.Lease.Status != leaserec.StatusExpired || got.Lease.EndReason != "reclaimed" {
		t.Fatalf("reclaim: %+v %v", got, err)
	}
	if got, _ := s.ReclaimExpired(ctx, f, "sess-b", now.Add(time.Hour)); got.Code != leases.CodeNotActive {
		t.Fatalf("second reclaim: %+v", got)
	}
	if ev := events(t, path, "lease.reclaim"); len(ev) != 1 || ev[0].SessionID != "sess-b" {
		t.Fatalf("reclaim events %+v", ev)
	}
	mustClaim(t, s, "sess-b", 1, now.Add(time.Hour))
	// Unparseable expiry is kept held.
	p2 := leasestest.NewDB(t, nil, []leasestest.Lease{{LeaseID: "bad", SessionID: "s",
		Work: leasestest.Work(leaserec.KindPR, 9), ExpiresAt: "not-a-date"}})
	s2, _ := leases.OpenReadWrite(p2, leases.StoreOptions{})
	defer s2.Close()
	if got, _ := s2.ReclaimExpired(ctx, leases.Fence{LeaseID: "bad", SessionID: "s", ExpiresAt: "not-a-date"}, "", now.Add(99*time.Hour)); got.Code != leases.CodeNotExpired {
		t.Fatalf("unparseable: %+v", got)
	}
}

func TestAbandon(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path, s := newStore(t, leases.StoreOptions{})
	l := mustClaim(t, s, "sess-a", 1, now)
	req := leases.AbandonRequest{Fence: leases.FenceOf(*l), Actor: "op", Evidence: leaserec.Evidence{Owner: leaserec.ProcessUnknown}}
	if got, _ := s.Abandon(ctx, req, now.Add(time.Minute)); got.Code != leases.CodeNotStale {
		t.Fatalf("unknown evidence must not abandon: %+v", got)
	}
	req.Evidence.Owner = leaserec.ProcessDead
	if got, _ := s.Abandon(ctx, req, now.Add(time.Hour)); got.Code != leases.CodeNotStale {
		t.Fatalf("expired must be reclaimed, not abandoned: %+v", got)
	}
	got, err := s.Abandon(ctx, req, now.Add(time.Minute))
	if err != nil || !got.OK() || got.Lease.Status != leaserec.StatusAbandoned || got.Lease.EndReason != "stale_dead_process" {
		t.Fatalf("abandon: %+v %v", got, err)
	}
	ev := events(t, path, "lease.abandon")
	if len(ev) != 1 || ev[0].Detail["owner"] != "dead" || ev[0].Detail["freshness"] != "stale_dead_process" || ev[0].SessionID != "op" {
		t.Fatalf("abandon event %+v", ev)
	}
	if got, _ := s.Abandon(ctx, req, now.Add(time.Minute)); got.Code != leases.CodeNotActive {
		t.Fatalf("again: %+v", got)
	}
}

func TestExpireSweep(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := leasestest.NewDB(t, nil, []leasestest.Lease{
		{LeaseID: "past", SessionID: "s", Work: leasestest.Work(leaserec.KindIssue, 1), ExpiresAt: leaserec.FormatTime(now.Add(-time.Second))},
		{LeaseID: "equal", SessionID: "s", Work: leasestest.Work(leaserec.KindIssue, 2), ExpiresAt: leaserec.FormatTime(now)},
		{LeaseID: "future", SessionID: "s", Work: leasestest.Work(leaserec.KindIssue, 3), ExpiresAt: leaserec.FormatTime(now.Add(time.Second))},
		{LeaseID: "missing", SessionID: "s", Work: leasestest.Work(leaserec.KindIssue, 4)},
		{LeaseID: "garbage", SessionID: "s", Work: leasestest.Work(leaserec.KindIssue, 5), ExpiresAt: "soon"},
		{LeaseID: "offset", SessionID: "s", Work: leasestest.Work(leaserec.KindIssue, 6), ExpiresAt: "2026-07-23T11:59:00+02:00"},
		{LeaseID: "done", SessionID: "s", Work: leasestest.Work(leaserec.KindIssue, 7), Status: leaserec.StatusReleased, ExpiresAt: "2020-01-01T00:00:00Z"},
	})
	s, err := leases.OpenReadWrite(path, leases.StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	out, err := s.ExpireSweep(ctx, now)
	if err != nil || !out.OK() || len(out.Expired) != 3 || out.Expired[0] != "past" || out.Expired[1] != "equal" || out.Expired[2] != "offset" {
		t.Fatalf("sweep %+v %v", out, err)
	}
	if len(events(t, path, "lease.expire")) != 3 {
		t.Fatal("expire events")
	}
	out, _ = s.ExpireSweep(ctx, now)
	if len(out.Expired) != 0 {
		t.Fatalf("second sweep %+v", out)
	}
}

func TestBusyIsAnOutcome(t *testing.T) {
	t.Parallel()
	path, s := newStore(t, leases.StoreOptions{BusyTimeout: 20 * time.Millisecond, BusyBudget: 100 * time.Millisecond})
	blocker, err := sql.Open("sqlite", "file:"+path+"?_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	defer blocker.Close()
	tx, err := blocker.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	out, err := s.Claim(context.Background(), claimReq("s", 1), now)
	if err != nil || out.Code != leases.CodeBusy {
		t.Fatalf("busy: %+v %v", out, err)
	}
	tx.Rollback()
	mustClaim(t, s, "s", 1, now)
}

func TestBeforeCommitHook(t *testing.T) {
	t.Parallel()
	calls := 0
	_, s := newStore(t, leases.StoreOptions{BeforeCommit: func() { calls++ }})
	mustClaim(t, s, "s", 1, now)
	s.Claim(context.Background(), claimReq("t", 1), now) // refusal commits its event
	s.Release(context.Background(), leases.Fence{LeaseID: "nope"}, "", now)
	if calls != 2 {
		t.Fatalf("hook ran %d times", calls)
	}
}

func TestOpenReadWriteMissing(t *testing.T) {
	t.Parallel()
	_, err := leases.OpenReadWrite(filepath.Join(t.TempDir(), "none.sqlite3"), leases.StoreOptions{})
	if err == nil || !errorsIs(err, leases.ErrNoDB) {
		t.Fatalf("%v", err)
	}
}

// TestAbandonJudgesByTheLeasesPolicy: Abandon classifies the lease by its task class's
// policy — a heartbeat missed past the policy's grace makes it stale even when its owner
// cannot be probed — not by an empty policy, under which no heartbeat rule applies.
func TestAbandonJudgesByTheLeasesPolicy(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, s := newStore(t, leases.StoreOptions{})
	req := claimReq("sess-a", 1)
	req.TTL = 24 * time.Hour
	l := mustClaimReq(t, s, req)
	p, _ := leaserec.DefaultPolicies().ForLease(*l)
	if !p.HeartbeatLifecycleActive {
		t.Fatalf("the claim's policy %+v has no heartbeat rule to judge by", p)
	}
	at := now.Add(p.MissedHeartbeatGrace() + time.Minute)
	if !at.Before(l.ExpiresAt.Time) {
		t.Fatalf("the lease expires at %v, before its grace ends at %v", l.ExpiresAt.Time, at)
	}
	ab := leases.AbandonRequest{Fence: leases.FenceOf(*l), Actor: "op", Evidence: leaserec.Evidence{Owner: leaserec.ProcessUnknown}}
	if got, err := s.Abandon(ctx, ab, now.Add(time.Minute)); err != nil || got.Code != leases.CodeNotStale {
		t.Fatalf("abandon before the grace: %+v %v, want not stale", got, err)
	}
	got, err := s.Abandon(ctx, ab, at)
	if err != nil || !got.OK() || got.Lease.Status != leaserec.StatusAbandoned {
		t.Fatalf("abandon a heartbeat past the policy's grace: %+v %v, want abandoned", got, err)
	}
}
