package live

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"steward/leases/seedtest"
	"steward/locks"
	"steward/locks/lockrec"
	"steward/model"
)

// seedWS is a workspace whose control-plane DB is the supervised system's own shape
// (leases/seedtest: the seed's names only, rollback journal, rows as the seed writes
// them), with real lock files and a real repository root, read through Load as
// `steward status` reads it.
type seedWS struct {
	t      *testing.T
	db     *seedtest.DB
	ws     Workspace
	branch string
}

func newSeedWS(t *testing.T) *seedWS {
	t.Helper()
	dir := t.TempDir()
	w := &seedWS{t: t, ws: Workspace{LocksDir: filepath.Join(dir, "locks"), RepoRoot: filepath.Join(dir, "repo")}}
	for _, d := range []string{w.ws.LocksDir, filepath.Join(w.ws.RepoRoot, "branches"), filepath.Join(dir, "db")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	w.ws.DBPath = filepath.Join(dir, "db", "control_plane.sqlite3")
	w.db = seedtest.NewAt(t, w.ws.DBPath, seedtest.Options{})
	root, err := filepath.EvalSymlinks(w.ws.RepoRoot)
	if err != nil {
		t.Fatal(err)
	}
	w.branch = filepath.Join(root, "branches")
	return w
}

// worktree returns a path under branches/, created when exists.
func (w *seedWS) worktree(name string, exists bool) string {
	p := filepath.Join(w.branch, name)
	if exists {
		if err := os.MkdirAll(p, 0o700); err != nil {
			w.t.Fatal(err)
		}
	}
	return p
}

// seedLock writes a canonical lock file for issue n (no host field: a local lock).
func (w *seedWS) seedLock(name string, n int64, session, leaseID string, exp time.Duration, pid int64, worktree string, mut ...func(*lockrec.Record)) {
	w.t.Helper()
	lo := lock(name, n, session, leaseID, exp, model.LivenessUnknown)
	rec := lo.Entry.Record
	rec.Remote = "prgs"
	rec.PID, rec.SessionPID = &pid, &pid
	rec.WorktreePath, rec.WorkLease.WorktreePath = worktree, worktree
	for _, f := range mut {
		f(&rec)
	}
	if _, err := locks.WriteCAS(w.ws.LocksDir, name, locks.ExpectAbsent(), rec); err != nil {
		w.t.Fatal(err)
	}
}

// snapshot reads the workspace as `steward status` does and derives it at now.
func (w *seedWS) snapshot() *model.Snapshot {
	w.t.Helper()
	in := Load(context.Background(), w.ws, NewProbe(w.ws.RepoRoot), now)
	return model.Build(in, model.Config{Remote: "prgs", Org: "acme", Repo: "widgets"}, now)
}

// reapedPID is the pid of a process that has exited and been reaped.
func reapedPID(t *testing.T) int64 {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return int64(cmd.Process.Pid)
}

type seedCase struct {
	name   string
	orphan model.OrphanKind
	cont   model.ContentionKind
	want   bool
	setup  func(w *seedWS)
}

// seedLease is an active author lease on issue n as the seed writes it: no host, no
// task_class, the status in the case given, a naive created_at and an isoformat expiry.
func seedLease(id, session, status string, n int64, exp time.Duration, pid int64, worktree string) seedtest.Lease {
	return seedtest.Lease{LeaseID: id, SessionID: session, Role: "author", Status: status, Item: seedtest.Issue(n),
		CreatedAt: seedtest.Naive(now.Add(-5 * time.Minute)), ExpiresAt: seedtest.ISO(now.Add(exp)),
		LastHeartbeatAt: seedtest.Naive(now.Add(-time.Minute)), OwnerPID: pid, WorktreePath: worktree}
}

func (w *seedWS) session(id, status string) {
	w.db.AddSession(seedtest.Session{SessionID: id, Role: "author", Profile: "prgs-author", PID: int64(os.Getpid()),
		Status: status, LastHeartbeatAt: seedtest.ISO(now.Add(-time.Minute))})
}

func seedCases() []seedCase {
	me := int64(os.Getpid())
	hour := time.Hour
	return []seedCase{
		{"past expiry", model.OrphanActiveLeasePastExpiry, "", true, func(w *seedWS) {
			w.session("s1", "Active")
			l := seedLease("L1", "s1", "ACTIVE", 7, 0, me, w.worktree("a", true))
			l.ExpiresAt = seedtest.Naive(now.Add(-time.Minute))
			w.db.AddLease(l)
		}},
		{"past expiry: a minute left", model.OrphanActiveLeasePastExpiry, "", false, func(w *seedWS) {
			w.session("s1", "Active")
			w.db.AddLease(seedLease("L1", "s1", "ACTIVE", 7, time.Minute, me, w.worktree("a", true)))
		}},
		{"orphan-lease: no session row", model.OrphanLease, "", true, func(w *seedWS) {
			w.session("s2", "active")
			w.db.AddLease(seedLease("L1", "ghost", "active", 7, hour, me, w.worktree("a", true)))
		}},
		{"orphan-lease: session row Active", model.OrphanLease, "", false, func(w *seedWS) {
			w.session("s1", "Active")
			w.db.AddLease(seedLease("L1", "s1", "active", 7, hour, me, w.worktree("a", true)))
		}},
		{"orphan-lease: session Ended", model.OrphanLease, "", true, func(w *seedWS) {
			w.session("s1", "Ended")
			w.db.AddLease(seedLease("L1", "s1", "Active", 7, hour, me, w.worktree("a", true)))
		}},
		{"orphan-lease: session ACTIVE", model.OrphanLease, "", false, func(w *seedWS) {
			w.session("s1", "ACTIVE")
			w.db.AddLease(seedLease("L1", "s1", "Active", 7, hour, me, w.worktree("a", true)))
		}},
		{"stale dead owner: hostless row on this host", model.OrphanStaleLeaseDeadOwner, "", true, func(w *seedWS) {
			w.session("s1", "active")
			w.db.AddLease(seedLease("L1", "s1", "active", 7, hour, reapedPID(w.t), w.worktree("a", true)))
		}},
		{"stale dead owner: owner alive", model.OrphanStaleLeaseDeadOwner, "", false, func(w *seedWS) {
			w.session("s1", "active")
			w.db.AddLease(seedLease("L1", "s1", "active", 7, hour, me, w.worktree("a", true)))
		}},
		{"stale dead owner: db_host names another host", model.OrphanStaleLeaseDeadOwner, "", false, func(w *seedWS) {
			w.ws.DBHost = "control-plane.elsewhere.example"
			w.session("s1", "active")
			w.db.AddLease(seedLease("L1", "s1", "active", 7, hour, reapedPID(w.t), w.worktree("a", true)))
		}},
		{"stale missing worktree", model.OrphanStaleLeaseMissingWorktree, "", true, func(w *seedWS) {
			w.session("s1", "active")
			w.db.AddLease(seedLease("L1", "s1", "active", 7, hour, me, w.worktree("gone", false)))
		}},
		{"stale missing worktree: worktree present", model.OrphanStaleLeaseMissingWorktree, "", false, func(w *seedWS) {
			w.session("s1", "active")
			w.db.AddLease(seedLease("L1", "s1", "active", 7, hour, me, w.worktree("here", true)))
		}},
		{"pending handoff", model.OrphanPendingHandoffUnconsumed, "", true, func(w *seedWS) {
			w.session("ctl", "active")
			l := seedLease("L1", "ctl", "active", 7, 5*time.Minute, me, "")
			l.Role, l.Phase = "reviewer", "awaiting_handoff"
			l.CreatedAt = seedtest.Naive(now.Add(-20 * time.Minute))
			l.ProvenanceJSON = `{"cross_role_handoff": true, "handoff_status": "pending", "required_role": "reviewer"}`
			w.db.AddLease(l)
		}},
		{"pending handoff: adopted", model.OrphanPendingHandoffUnconsumed, "", false, func(w *seedWS) {
			w.session("ctl", "active")
			l := seedLease("L1", "ctl", "active", 7, 5*time.Minute, me, "")
			l.Role, l.Phase, l.AdoptedBySessionID = "reviewer", "awaiting_handoff", "rev-1"
			l.CreatedAt = seedtest.Naive(now.Add(-20 * time.Minute))
			l.ProvenanceJSON = `{"cross_role_handoff": true, "handoff_status": "pending", "required_role": "reviewer"}`
			w.db.AddLease(l)
		}},
		{"lock without worktree", model.OrphanLockWithoutWorktree, "", true, func(w *seedWS) {
			w.seedLock("a.json", 7, "s1", "", -time.Minute, 0, w.worktree("gone", false))
		}},
		{"lock without worktree: worktree present", model.OrphanLockWithoutWorktree, "", false, func(w *seedWS) {
			w.seedLock("a.json", 7, "s1", "", -time.Minute, 0, w.worktree("here", true))
		}},
		{"live lock dead owner", model.OrphanLiveLockDeadOwner, "", true, func(w *seedWS) {
			w.seedLock("a.json", 7, "s1", "", hour, reapedPID(w.t), w.worktree("a", true))
		}},
		{"live lock dead owner: owner alive", model.OrphanLiveLockDeadOwner, "", false, func(w *seedWS) {
			w.seedLock("a.json", 7, "s1", "", hour, me, w.worktree("a", true))
		}},
		{"stale lock dead owner", model.OrphanStaleLockDeadOwner, "", true, func(w *seedWS) {
			w.seedLock("a.json", 7, "s1", "", -time.Minute, reapedPID(w.t), w.worktree("a", true))
		}},
		{"stale lock dead owner: not expired", model.OrphanStaleLockDeadOwner, "", false, func(w *seedWS) {
			w.seedLock("a.json", 7, "s1", "", time.Minute, reapedPID(w.t), w.worktree("a", true))
		}},
		{"expired lock live owner", model.OrphanExpiredLockLiveOwner, "", true, func(w *seedWS) {
			w.seedLock("a.json", 7, "s1", "", -time.Minute, me, w.worktree("a", true))
		}},
		{"expired lock live owner: not expired", model.OrphanExpiredLockLiveOwner, "", false, func(w *seedWS) {
			w.seedLock("a.json", 7, "s1", "", time.Minute, me, w.worktree("a", true))
		}},
		{"lock never expires", model.OrphanLockNeverExpires, "", true, func(w *seedWS) {
			w.seedLock("a.json", 7, "s1", "", 0, me, w.worktree("a", true), func(r *lockrec.Record) { r.WorkLease.ExpiresAt = lockrec.Timestamp{} })
		}},
		{"lock never expires: expiry recorded", model.OrphanLockNeverExpires, "", false, func(w *seedWS) {
			w.seedLock("a.json", 7, "s1", "", hour, me, w.worktree("a", true))
		}},
		{"incomplete lock", model.OrphanIncompleteLock, "", true, func(w *seedWS) {
			w.seedLock("a.json", 7, "s1", "", hour, me, w.worktree("a", true), func(r *lockrec.Record) { r.LockProvenance = nil })
		}},
		{"incomplete lock: canonical", model.OrphanIncompleteLock, "", false, func(w *seedWS) {
			w.seedLock("a.json", 7, "s1", "", hour, me, w.worktree("a", true))
		}},
		{"legacy lock", model.OrphanLegacyLock, "", true, func(w *seedWS) {
			w.seedLock("a.json", 7, "s1", "", hour, me, w.worktree("a", true), func(r *lockrec.Record) {
				r.Claimant, r.WorkLease.Claimant = r.WorkLease.Claimant, nil
			})
		}},
		{"legacy lock: claimant in work_lease", model.OrphanLegacyLock, "", false, func(w *seedWS) {
			w.seedLock("a.json", 7, "s1", "", hour, me, w.worktree("a", true))
		}},
		{"unreadable lock", model.OrphanUnreadableLock, "", true, func(w *seedWS) {
			if err := os.WriteFile(filepath.Join(w.ws.LocksDir, "torn.json"), []byte(`{"remote": "prgs", "org"`), 0o600); err != nil {
				w.t.Fatal(err)
			}
		}},
		{"unreadable lock: whole record", model.OrphanUnreadableLock, "", false, func(w *seedWS) {
			w.seedLock("a.json", 7, "s1", "", hour, me, w.worktree("a", true))
		}},
		{"claim refused (the seed's events name no session)", "", model.ContentionClaimRefused, true, func(w *seedWS) {
			it := seedtest.Issue(7)
			w.db.AddEvent(seedtest.Event{Item: &it, Type: "claim.refused", Message: "claimed_by_other_session", CreatedAt: seedtest.Naive(now.Add(-time.Minute))})
		}},
		{"claim refused: outside the window", "", model.ContentionClaimRefused, false, func(w *seedWS) {
			it := seedtest.Issue(7)
			w.db.AddEvent(seedtest.Event{Item: &it, Type: "claim.refused", Message: "claimed_by_other_session", CreatedAt: seedtest.Naive(now.Add(-2 * hour))})
		}},
		{"duplicate live lock", "", model.ContentionDuplicateLiveLock, true, func(w *seedWS) {
			w.seedLock("a.json", 7, "s1", "", hour, me, w.worktree("a", true))
			w.seedLock("b.json", 7, "s2", "", hour, me, w.worktree("b", true))
		}},
		{"duplicate live lock: two issues", "", model.ContentionDuplicateLiveLock, false, func(w *seedWS) {
			w.seedLock("a.json", 7, "s1", "", hour, me, w.worktree("a", true))
			w.seedLock("b.json", 8, "s2", "", hour, me, w.worktree("b", true))
		}},
		{"concurrent active lease (active and ACTIVE)", "", model.ContentionConcurrentActiveLease, true, func(w *seedWS) {
			w.session("s1", "active")
			w.session("s2", "active")
			w.db.AddLease(seedLease("L1", "s1", "active", 7, hour, me, w.worktree("a", true)))
			w.db.AddLease(seedLease("L2", "s2", "ACTIVE", 7, hour, me, w.worktree("b", true)))
		}},
		{"concurrent active lease: one Released", "", model.ContentionConcurrentActiveLease, false, func(w *seedWS) {
			w.session("s1", "active")
			w.session("s2", "active")
			w.db.AddLease(seedLease("L1", "s1", "active", 7, hour, me, w.worktree("a", true)))
			w.db.AddLease(seedLease("L2", "s2", "Released", 7, hour, me, w.worktree("b", true)))
		}},
		{"lock behind its lease (a heartbeat whose lock write failed)", model.OrphanLockLeaseExpiryMismatch, "", true, func(w *seedWS) {
			w.session("s1", "active")
			w.db.AddLease(seedLease("L1", "s1", "Active", 7, hour, me, w.worktree("a", true)))
			w.seedLock("a.json", 7, "s1", "L1", 10*time.Minute, me, w.worktree("a", true))
		}},
		{"lock and lease agree", model.OrphanLockLeaseExpiryMismatch, "", false, func(w *seedWS) {
			w.session("s1", "active")
			w.db.AddLease(seedLease("L1", "s1", "Active", 7, hour, me, w.worktree("a", true)))
			w.seedLock("a.json", 7, "s1", "L1", hour, me, w.worktree("a", true))
		}},
		{"mismatch: released lease, live lock", "", model.ContentionLockLeaseMismatch, true, func(w *seedWS) {
			w.session("s1", "active")
			w.db.AddLease(seedLease("L1", "s1", "Released", 7, hour, me, w.worktree("a", true)))
			w.seedLock("a.json", 7, "s1", "L1", hour, me, w.worktree("a", true))
		}},
		{"mismatch: active lease, live lock", "", model.ContentionLockLeaseMismatch, false, func(w *seedWS) {
			w.session("s1", "active")
			w.db.AddLease(seedLease("L1", "s1", "Active", 7, hour, me, w.worktree("a", true)))
			w.seedLock("a.json", 7, "s1", "L1", hour, me, w.worktree("a", true))
		}},
		{"mismatch: lock names a lease the DB does not have", "", model.ContentionLockLeaseMismatch, true, func(w *seedWS) {
			w.session("s1", "active")
			w.db.AddLease(seedLease("L1", "s1", "active", 8, hour, me, w.worktree("b", true)))
			w.seedLock("a.json", 7, "s1", "L-gone", hour, me, w.worktree("a", true))
		}},
		{"mismatch: lease held by another session", "", model.ContentionLockLeaseMismatch, true, func(w *seedWS) {
			w.session("s1", "active")
			w.db.AddLease(seedLease("L1", "s1", "active", 7, hour, me, w.worktree("a", true)))
			w.seedLock("a.json", 7, "s2", "L1", hour, me, w.worktree("a", true))
		}},
	}
}

// TestSeedShapedKinds: on a control-plane DB shaped and written as the supervised system
// writes it, every orphan and contention kind that can arise without Gitea shows, and
// its near miss does not; the DB reads ok, not partial. Before the fix the DB read
// degraded and partial (steward's columns absent), which switched off orphan-lease and
// lock-lease-mismatch everywhere, hostless leases read unknown (no dead owner, no missing
// worktree), and a session "Active" read not live.
func TestSeedShapedKinds(t *testing.T) {
	for _, tc := range seedCases() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newSeedWS(t)
			tc.setup(w)
			s := w.snapshot()
			if h := s.Sources.DB; h.Status != model.StatusOK || h.Partial {
				t.Fatalf("db source %+v, want ok and complete", h)
			}
			if tc.cont != "" {
				if got := contentionOf(s, tc.cont); (len(got) > 0) != tc.want {
					t.Fatalf("%s: %d entries, want present=%v; contention %+v", tc.cont, len(got), tc.want, s.Contention)
				}
				return
			}
			if got := orphansOf(s, tc.orphan); (len(got) > 0) != tc.want {
				t.Fatalf("%s: %d, want present=%v; orphans %v; claims %+v", tc.orphan, len(got), tc.want, kinds(s), s.Claims)
			}
		})
	}
}

// TestSeedCasesCoverEveryKind: every orphan and contention kind that does not need Gitea
// has a positive and a near-miss case on the seed-shaped fixture.
func TestSeedCasesCoverEveryKind(t *testing.T) {
	seen := map[string][2]int{}
	for _, tc := range seedCases() {
		k := string(tc.orphan) + string(tc.cont)
		c := seen[k]
		if tc.want {
			c[0]++
		} else {
			c[1]++
		}
		seen[k] = c
	}
	gitea := map[string]bool{string(model.OrphanMergedPRLiveClaim): true, string(model.OrphanClosedIssueLiveClaim): true, string(model.OrphanStalePRNoClaim): true}
	var all []string
	for _, k := range model.OrphanKinds {
		all = append(all, string(k))
	}
	for _, k := range model.ContentionKinds {
		all = append(all, string(k))
	}
	for _, k := range all {
		if c := seen[k]; !gitea[k] && (c[0] == 0 || c[1] == 0) {
			t.Errorf("kind %s: %d positive, %d near-miss cases on the seed fixture; want both", k, c[0], c[1])
		}
	}
}

// TestSeedReviewerLeaseNeverCapped: a heartbeating reviewer lease nine hours old, with no
// task_class (the seed writes none), is governed by the reviewer row of the seed's policy
// table — no absolute cap — and reads active; before the fix it took the author policy
// and read stale_absolute_cap, an abandon orphan. A controller's lease (no row of the
// table) reads active too, never stale by the clock.
func TestSeedReviewerLeaseNeverCapped(t *testing.T) {
	w := newSeedWS(t)
	me := int64(os.Getpid())
	w.db.AddSession(seedtest.Session{SessionID: "rev", Role: "reviewer", PID: me, Status: "Active", LastHeartbeatAt: seedtest.ISO(now)})
	w.db.AddSession(seedtest.Session{SessionID: "ctl", Role: "controller", PID: me, Status: "active", LastHeartbeatAt: seedtest.ISO(now)})
	for _, l := range []seedtest.Lease{
		{LeaseID: "L-rev", SessionID: "rev", Role: "Reviewer", Status: "active", Item: seedtest.PR(31),
			CreatedAt: seedtest.Naive(now.Add(-9 * time.Hour)), ExpiresAt: seedtest.ISO(now.Add(8 * time.Minute)),
			LastHeartbeatAt: seedtest.ISO(now.Add(-2 * time.Minute)), HeartbeatCount: 250, OwnerPID: me},
		{LeaseID: "L-ctl", SessionID: "ctl", Role: "controller", Status: "active", Item: seedtest.Issue(32),
			CreatedAt: seedtest.Naive(now.Add(-9 * time.Hour)), ExpiresAt: seedtest.ISO(now.Add(8 * time.Minute)),
			LastHeartbeatAt: seedtest.ISO(now.Add(-30 * time.Minute)), OwnerPID: me},
	} {
		w.db.AddLease(l)
	}
	s := w.snapshot()
	if len(s.Orphans) != 0 {
		t.Fatalf("orphans %v", kinds(s))
	}
	want := map[string]string{"L-rev": "reviewer_pr", "L-ctl": "unmapped"}
	for _, c := range s.Claims {
		if c.Freshness != "active" || c.TaskClass != want[c.LeaseID] {
			t.Errorf("%s: freshness %s, policy %s; want active under %s", c.LeaseID, c.Freshness, c.TaskClass, want[c.LeaseID])
		}
	}
	for _, x := range s.Sessions {
		if !x.Live || x.Liveness != model.LivenessAlive {
			t.Errorf("session %s (%s): live=%v liveness=%s; a session Active with a live pid on this host is live", x.SessionID, x.Status, x.Live, x.Liveness)
		}
	}
	if len(s.Claims) != 2 {
		t.Fatalf("claims %+v", s.Claims)
	}
}

// TestSeedUndecodableRowIsScoped: one lease row whose expires_at cannot be parsed makes
// its own item unproven — no orphan-lease or lock-lease-mismatch concluded for it, the
// reason on the item — and nothing else: the DB reads ok and complete, and another item's
// orphan-lease still shows. Before the fix the row degraded the leases section and
// switched the whole-DB verdicts off for every item.
func TestSeedUndecodableRowIsScoped(t *testing.T) {
	w := newSeedWS(t)
	me := int64(os.Getpid())
	bad := seedLease("L-bad", "ghost", "active", 7, time.Hour, me, w.worktree("a", true))
	bad.ExpiresAt = "next tuesday"
	w.db.AddLease(bad)
	w.db.AddLease(seedLease("L-ok", "ghost", "active", 8, time.Hour, me, w.worktree("b", true)))
	s := w.snapshot()
	if h := s.Sources.DB; h.Status != model.StatusOK || h.Partial || !strings.Contains(strings.Join(h.Notes, "|"), "undecodable") {
		t.Fatalf("db source %+v", h)
	}
	var on7, on8 int
	for _, o := range orphansOf(s, model.OrphanLease) {
		switch o.LeaseID {
		case "L-bad":
			on7++
		case "L-ok":
			on8++
		}
	}
	if on7 != 0 || on8 != 1 {
		t.Fatalf("orphan-lease on the undecodable row %d, on the good one %d; want 0 and 1", on7, on8)
	}
	found := false
	for _, it := range s.Items {
		if it.Item.Number == 7 {
			found = strings.Contains(strings.Join(it.Reasons, "|"), "unproven")
		}
	}
	if !found {
		t.Fatalf("item 7 does not say it is unproven: %+v", s.Items)
	}
}

// TestSeedLeaseGenerationShown: where the DB records the seed's lease_generation_id, the
// claim carries it (status --json claims[].lease_generation_id); where it does not, the
// field is absent and the DB reads ok all the same.
func TestSeedLeaseGenerationShown(t *testing.T) {
	for _, withColumn := range []bool{true, false} {
		dir := t.TempDir()
		ws := Workspace{LocksDir: filepath.Join(dir, "locks"), DBPath: filepath.Join(dir, "cp.sqlite3"), RepoRoot: dir}
		if err := os.MkdirAll(ws.LocksDir, 0o700); err != nil {
			t.Fatal(err)
		}
		opt := seedtest.Options{}
		if withColumn {
			opt.Add = []string{"leases.lease_generation_id INTEGER"}
		}
		d := seedtest.NewAt(t, ws.DBPath, opt)
		d.AddLease(seedtest.Lease{LeaseID: "L1", SessionID: "s1", Role: "author", Item: seedtest.Issue(7),
			CreatedAt: seedtest.Naive(now), ExpiresAt: seedtest.ISO(now.Add(time.Hour)), Generation: 12})
		s := model.Build(Load(context.Background(), ws, NewProbe(ws.RepoRoot), now), model.Config{}, now)
		if len(s.Claims) != 1 || s.Sources.DB.Status != model.StatusOK {
			t.Fatalf("claims %+v db %+v", s.Claims, s.Sources.DB)
		}
		g := s.Claims[0].LeaseGeneration
		if withColumn && (g == nil || *g != 12) || !withColumn && g != nil {
			t.Fatalf("column %v: lease_generation_id %v", withColumn, g)
		}
	}
}
