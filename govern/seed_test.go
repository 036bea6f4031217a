package govern

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"steward/govern/actionid"
	"steward/leases"
	"steward/leases/leaserec"
	"steward/leases/seedtest"
	"steward/locks"
)

// TestActiveInAnyCaseBlocksAGovernedClaim: a lease whose status reads ACTIVE (a foreign
// writer, as the seed compares statuses lower-cased) holds its item: the governed claim's
// preview refuses claimed_by_other_session, and so does its apply, writing no second
// lease. Before the fix the preview skipped the lease (status != "active") and the apply's
// transaction looked for status = 'active': a second active lease was granted.
func TestActiveInAnyCaseBlocksAGovernedClaim(t *testing.T) {
	for _, status := range []string{"ACTIVE", "Active", " active "} {
		t.Run(status, func(t *testing.T) {
			f := newFixture(t, RoleOperator)
			db, err := sql.Open("sqlite", f.ws.DBPath+"?_pragma=busy_timeout(5000)&_pragma=ignore_check_constraints(1)")
			if err != nil {
				t.Fatal(err)
			}
			db.SetMaxOpenConns(1)
			for _, q := range []string{
				`INSERT INTO work_items(remote, org, repo, work_kind, work_number) VALUES('origin', 'acme', 'widgets', 'issue', 7)`,
				`INSERT INTO leases(lease_id, work_item_id, session_id, status, created_at, expires_at)
				 VALUES('L-held', 1, 'holder', '` + status + `', '` + ts(0) + `', '` + ts(30*60e9) + `')`,
			} {
				if _, err := db.Exec(q); err != nil {
					t.Fatal(err)
				}
			}
			db.Close()
			req := Request{Action: actionid.Claim, Target: Target{Item: item(7), Session: "s2"}, Params: ClaimParams{PID: "1"}}
			pv, err := f.core.Preview(context.Background(), req)
			if err != nil || pv.Allowed || pv.Refusal == nil || pv.Refusal.Code != CodeClaimedByOther {
				t.Fatalf("preview: %+v %v", pv.Refusal, err)
			}
			out := f.core.Apply(context.Background(), pv, "")
			if out.Result != ResultRefused || out.Code != CodeClaimedByOther {
				t.Fatalf("apply: %+v", out)
			}
			var n int
			if err := f.db().QueryRow(`SELECT count(*) FROM leases WHERE work_item_id = 1`).Scan(&n); err != nil || n != 1 {
				t.Fatalf("%d leases on the item after a refused claim (%v)", n, err)
			}
		})
	}
}

// newSeedFixture is a workspace whose control-plane DB is the supervised system's own
// (leases/seedtest: the seed's names only, rollback journal, no steward column).
func newSeedFixture(t *testing.T, opt seedtest.Options) (*fixture, *seedtest.DB) {
	t.Helper()
	f := newFixture(t, RoleOperator)
	for _, p := range []string{f.ws.DBPath, f.ws.DBPath + "-wal", f.ws.DBPath + "-shm"} {
		if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	return f, seedtest.NewAt(t, f.ws.DBPath, opt)
}

func seedItem(n int64) seedtest.Item {
	return seedtest.Item{Remote: "origin", Org: "acme", Repo: "widgets", Kind: "issue", Number: n}
}

// seedLease is an author lease on issue n as the seed writes it: no host, no task_class.
func seedLease(id, session, status string, n int64, exp time.Duration, pid int64, worktree string) seedtest.Lease {
	return seedtest.Lease{LeaseID: id, SessionID: session, Role: "author", Status: status, Item: seedItem(n),
		CreatedAt: seedtest.Naive(now0.Add(-20 * time.Minute)), ExpiresAt: seedtest.ISO(now0.Add(exp)),
		LastHeartbeatAt: seedtest.Naive(now0.Add(-time.Minute)), OwnerPID: pid, WorktreePath: worktree}
}

// fingerprint hashes the DB, its journal/WAL and the lock directory.
func (f *fixture) fingerprint() string { return seedtest.Fingerprint(f.t, f.ws.DBPath, f.ws.LocksDir) }

// seedSchema is the DB's schema text (every CREATE statement).
func (f *fixture) seedSchema() string {
	f.t.Helper()
	rows, err := f.db().Query("SELECT coalesce(sql, '') FROM sqlite_master ORDER BY name")
	if err != nil {
		f.t.Fatal(err)
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			f.t.Fatal(err)
		}
		b.WriteString(s + "\n")
	}
	return b.String()
}

// seedActionCase is one governed action on a seed-shaped DB: it applies (writing only the
// columns the DB has, keeping its journal and schema), or its preview refuses with the
// code its apply refuses with, and the refusal changes no byte of the DB, its journal or
// the lock directory.
type seedActionCase struct {
	name   string
	opt    seedtest.Options
	gitea  bool
	setup  func(f *fixture, d *seedtest.DB) Request
	refuse string
	check  func(t *testing.T, f *fixture, out Outcome)
}

func seedActionCases() []seedActionCase {
	me := int64(os.Getpid())
	claimReq := func(n int64, session string) Request {
		return Request{Action: actionid.Claim, Target: Target{Item: item(n), Session: session},
			Params: ClaimParams{PID: strconv.Itoa(os.Getpid()), Role: "author", Username: "bot-" + session}}
	}
	wt := func(f *fixture, name string) string {
		p := filepath.Join(f.core.branchesRoot(), name)
		if err := os.MkdirAll(p, 0o700); err != nil {
			f.t.Fatal(err)
		}
		return p
	}
	return []seedActionCase{
		{name: "claim", setup: func(f *fixture, d *seedtest.DB) Request { return claimReq(7, "s1") },
			check: func(t *testing.T, f *fixture, out Outcome) {
				l := f.lease(out.Detail["lease_id"])
				if l.Status != leaserec.StatusActive || !strings.HasSuffix(l.ExpiresAt.Raw, "+00:00") || l.OwnerPID != int64(os.Getpid()) {
					t.Errorf("lease %+v", l)
				}
				if e := locks.ReadFile(f.ws.LocksDir, out.Detail["lock_file"]); e.Missing || e.Record.LeaseID != l.LeaseID {
					t.Errorf("lock %+v", e)
				}
			}},
		{name: "claim refused: held by a lease ACTIVE", setup: func(f *fixture, d *seedtest.DB) Request {
			d.AddLease(seedLease("L-held", "holder", "ACTIVE", 7, time.Hour, me, ""))
			return claimReq(7, "s2")
		}, refuse: CodeClaimedByOther},
		{name: "claim refused: no expires_at column", opt: seedtest.Options{Drop: []string{"leases.expires_at"}},
			setup: func(f *fixture, d *seedtest.DB) Request { return claimReq(7, "s1") }, refuse: string(leases.CodeSchemaUnsupported)},
		{name: "heartbeat", setup: func(f *fixture, d *seedtest.DB) Request {
			out := f.claim("s1", 7)
			f.clock.Add(time.Minute)
			return Request{Action: actionid.Heartbeat, Target: Target{LeaseID: out.Detail["lease_id"], Session: "s1"}}
		}, check: func(t *testing.T, f *fixture, out Outcome) {
			if want := f.clock.Now().Add(10 * time.Minute).UTC().Format(leases.SeedTimeLayout); out.Detail["expires_at"] != want {
				t.Errorf("expires_at %s, want %s", out.Detail["expires_at"], want)
			}
		}},
		{name: "release", setup: func(f *fixture, d *seedtest.DB) Request {
			out := f.claim("s1", 7)
			return Request{Action: actionid.Release, Target: Target{LeaseID: out.Detail["lease_id"], Session: "s1"}}
		}, check: func(t *testing.T, f *fixture, out Outcome) {
			if l := f.lease(f.records()[len(f.records())-1].Target.LeaseID); l.Status != leaserec.StatusReleased {
				t.Errorf("lease after release: %s", l.Status)
			}
		}},
		{name: "reclaim expired", setup: func(f *fixture, d *seedtest.DB) Request {
			l := seedLease("L1", "s1", "Active", 1, -5*time.Minute, me, "")
			l.ExpiresAt = seedtest.Naive(now0.Add(-5 * time.Minute))
			d.AddLease(l)
			return Request{Action: actionid.ReclaimExpired, Target: Target{LeaseID: "L1"}}
		}, check: func(t *testing.T, f *fixture, out Outcome) {
			if l := f.lease("L1"); l.Status != leaserec.StatusExpired || l.ReleasedAt.Raw == "" {
				t.Errorf("lease after reclaim: %s %q", l.Status, l.ReleasedAt.Raw)
			}
		}},
		{name: "reclaim refused: not expired", setup: func(f *fixture, d *seedtest.DB) Request {
			d.AddLease(seedLease("L1", "s1", "active", 1, 5*time.Minute, me, ""))
			return Request{Action: actionid.ReclaimExpired, Target: Target{LeaseID: "L1"}}
		}, refuse: string(leases.CodeNotExpired)},
		{name: "abandon: hostless lease, owner dead on this host", setup: func(f *fixture, d *seedtest.DB) Request {
			d.AddSession(seedtest.Session{SessionID: "s1", Role: "author", Status: "Active"})
			d.AddLease(seedLease("L1", "s1", "active", 1, 5*time.Minute, deadPID(f.t), wt(f, "feat-1")))
			return Request{Action: actionid.AbandonStale, Target: Target{LeaseID: "L1"}}
		}, check: func(t *testing.T, f *fixture, out Outcome) {
			if l := f.lease("L1"); l.Status != leaserec.StatusAbandoned {
				t.Errorf("lease after abandon: %s", l.Status)
			}
		}},
		{name: "abandon refused: live reviewer lease nine hours old", setup: func(f *fixture, d *seedtest.DB) Request {
			l := seedLease("L1", "rev", "active", 31, 8*time.Minute, me, wt(f, "review-31"))
			l.Role, l.Item.Kind = "reviewer", "pr"
			l.CreatedAt = seedtest.Naive(now0.Add(-9 * time.Hour))
			d.AddLease(l)
			return Request{Action: actionid.AbandonStale, Target: Target{LeaseID: "L1"}}
		}, refuse: string(leases.CodeNotStale)},
		{name: "abandon refused: db_host is another host", setup: func(f *fixture, d *seedtest.DB) Request {
			f.ws.DBHost = "control-plane.elsewhere.example"
			f.core = f.newCore(RoleOperator, false)
			d.AddLease(seedLease("L1", "s1", "active", 1, 5*time.Minute, deadPID(f.t), ""))
			return Request{Action: actionid.AbandonStale, Target: Target{LeaseID: "L1"}}
		}, refuse: codeLivenessUnproven},
		{name: "expire sweep", setup: func(f *fixture, d *seedtest.DB) Request {
			l := seedLease("L1", "s1", "ACTIVE", 1, 0, me, "")
			l.ExpiresAt = seedtest.Naive(now0.Add(-time.Minute))
			d.AddLease(l)
			d.AddLease(seedLease("L2", "s2", "active", 2, time.Hour, me, ""))
			return Request{Action: actionid.ExpireSweep}
		}, check: func(t *testing.T, f *fixture, out Outcome) {
			if f.lease("L1").Status != leaserec.StatusExpired || f.lease("L2").Status != leaserec.StatusActive {
				t.Errorf("sweep: L1 %s, L2 %s", f.lease("L1").Status, f.lease("L2").Status)
			}
		}},
		{name: "retire refused: the lock's lease is ACTIVE", setup: func(f *fixture, d *seedtest.DB) Request {
			d.AddLease(seedLease("L1", "s-lock", "ACTIVE", 4, time.Hour, me, ""))
			name := f.lockFile(4, -time.Minute, deadPID(f.t))
			f.renameLease(name, "L1")
			return Request{Action: actionid.RetireLock, Target: Target{LockFile: name}}
		}, refuse: codeFreshForeignLease},
		{name: "retire: the lock's lease expired, its owner dead", setup: func(f *fixture, d *seedtest.DB) Request {
			l := seedLease("L1", "s-lock", "Active", 4, 0, deadPID(f.t), "")
			l.ExpiresAt = seedtest.Naive(now0.Add(-10 * time.Minute))
			d.AddLease(l)
			name := f.lockFile(4, -time.Minute, deadPID(f.t))
			f.renameLease(name, "L1")
			return Request{Action: actionid.RetireLock, Target: Target{LockFile: name}}
		}, check: func(t *testing.T, f *fixture, out Outcome) {
			name, _ := locks.Name(lockKey(work(4)))
			if e := locks.ReadFile(f.ws.LocksDir, name); !e.Missing {
				t.Errorf("the lock is still live")
			}
		}},
		{name: "retire then undo (restore)", setup: func(f *fixture, d *seedtest.DB) Request {
			pv, err := f.core.Preview(context.Background(), Request{Action: actionid.RetireLock,
				Target: Target{LockFile: f.lockFile(4, -time.Minute, deadPID(f.t))}})
			out := f.core.Apply(context.Background(), pv, pv.ConfirmPhrase)
			if err != nil || out.Result != ResultSucceeded {
				f.t.Fatalf("retire: %+v %v", out, err)
			}
			return Request{Action: actionid.Undo, Target: Target{Attempt: out.Attempt}}
		}, check: func(t *testing.T, f *fixture, out Outcome) {
			name, _ := locks.Name(lockKey(work(4)))
			if e := locks.ReadFile(f.ws.LocksDir, name); e.Missing {
				t.Errorf("the lock was not restored")
			}
		}},
		{name: "restore an archived lock", setup: func(f *fixture, d *seedtest.DB) Request {
			pv, err := f.core.Preview(context.Background(), Request{Action: actionid.RetireLock,
				Target: Target{LockFile: f.lockFile(4, -time.Minute, deadPID(f.t))}})
			out := f.core.Apply(context.Background(), pv, pv.ConfirmPhrase)
			if err != nil || out.Result != ResultSucceeded {
				f.t.Fatalf("retire: %+v %v", out, err)
			}
			return Request{Action: actionid.RestoreLock, Target: Target{LockFile: out.Detail["archived"]}}
		}, check: func(t *testing.T, f *fixture, out Outcome) {}},
		{name: "restore refused: the item's lease is ACTIVE since", setup: func(f *fixture, d *seedtest.DB) Request {
			pv, err := f.core.Preview(context.Background(), Request{Action: actionid.RetireLock,
				Target: Target{LockFile: f.lockFile(4, -time.Minute, deadPID(f.t))}})
			out := f.core.Apply(context.Background(), pv, pv.ConfirmPhrase)
			if err != nil || out.Result != ResultSucceeded {
				f.t.Fatalf("retire: %+v %v", out, err)
			}
			d.AddLease(seedLease("L-new", "s-new", "ACTIVE", 4, time.Hour, me, ""))
			return Request{Action: actionid.RestoreLock, Target: Target{LockFile: out.Detail["archived"]}}
		}, refuse: codeClaimedSince},
		{name: "relabel (Gitea only, no DB write)", gitea: true, setup: func(f *fixture, d *seedtest.DB) Request {
			n := f.repo.CreateIssue("maint", "answered", "body")
			return Request{Action: actionid.Relabel, Target: Target{Item: item(n)}, Params: RelabelParams{Label: "status:blocked-pending-clarification"}}
		}, check: func(t *testing.T, f *fixture, out Outcome) {}},
		{name: "claim with the seed's lease_generation_id", opt: seedtest.Options{Add: []string{"leases.lease_generation_id INTEGER"}},
			setup: func(f *fixture, d *seedtest.DB) Request {
				d.AddLease(seedtest.Lease{LeaseID: "L-old", SessionID: "s0", Status: "Released", Item: seedItem(7),
					CreatedAt: seedtest.Naive(now0.Add(-time.Hour)), ExpiresAt: seedtest.Naive(now0.Add(-time.Hour)), Generation: 41})
				return claimReq(7, "s1")
			}, check: func(t *testing.T, f *fixture, out Outcome) {
				if out.Detail["lease_generation_id"] != "42" {
					t.Errorf("claim detail %v: want lease_generation_id 42 (the item's next)", out.Detail)
				}
				// A heartbeat fenced on the generation the claim made renews it (43); a second
				// heartbeat from the same stale preview is refused fence_moved.
				pv, err := f.core.Preview(context.Background(), Request{Action: actionid.Heartbeat,
					Target: Target{LeaseID: out.Detail["lease_id"], Session: "s1"}})
				if err != nil || !pv.Allowed {
					t.Fatalf("heartbeat preview: %+v %v", pv.Refusal, err)
				}
				if o := f.core.Apply(context.Background(), pv, ""); o.Result != ResultSucceeded {
					t.Fatalf("heartbeat: %+v", o)
				}
				if l := f.lease(out.Detail["lease_id"]); l.Generation != 43 {
					t.Errorf("generation after a heartbeat: %d, want 43", l.Generation)
				}
				if o := f.core.Apply(context.Background(), pv, ""); o.Result != ResultRefused || o.Code != CodeFenceMoved {
					t.Errorf("a second apply of the same preview: %+v, want refused fence_moved", o)
				}
			}},
		{name: "ask (releases the claim)", gitea: true, setup: func(f *fixture, d *seedtest.DB) Request {
			n := f.repo.CreateIssue("maint", "unclear", "body")
			out := f.claim("s1", n)
			return Request{Action: actionid.Ask, Target: Target{LeaseID: out.Detail["lease_id"], Session: "s1"}, Params: AskParams{Question: "Which API?"}}
		}, check: func(t *testing.T, f *fixture, out Outcome) {}},
		{name: "recover: the lease expired and its lock's owner is dead", setup: func(f *fixture, d *seedtest.DB) Request {
			l := seedLease("L1", "s-lock", "Active", 4, 0, deadPID(f.t), "")
			l.ExpiresAt = seedtest.Naive(now0.Add(-10 * time.Minute))
			d.AddLease(l)
			f.renameLease(f.lockFile(4, -time.Minute, deadPID(f.t)), "L1")
			return Request{Action: actionid.Recover, Target: Target{Item: item(4)}}
		}, check: func(t *testing.T, f *fixture, out Outcome) {
			name, _ := locks.Name(lockKey(work(4)))
			if e := locks.ReadFile(f.ws.LocksDir, name); !e.Missing || f.lease("L1").Status != leaserec.StatusExpired {
				t.Errorf("after recover: lock missing %v, lease %s", e.Missing, f.lease("L1").Status)
			}
		}},
		{name: "answer (no DB write)", gitea: true, setup: func(f *fixture, d *seedtest.DB) Request {
			return Request{Action: actionid.Answer, Target: Target{Item: item(f.markedIssue())}, Params: AnswerParams{Body: "Use v2."}}
		}, check: func(t *testing.T, f *fixture, out Outcome) {}},
		{name: "attention ack (beside the audit log, no DB write)", setup: func(f *fixture, d *seedtest.DB) Request {
			return Request{Action: actionid.AttentionAck, Target: Target{Entry: "orphan:active-lease-past-expiry:L1"}, Params: AttentionParams{Evidence: "e"}}
		}, check: func(t *testing.T, f *fixture, out Outcome) {}},
		{name: "attention snooze (beside the audit log, no DB write)", setup: func(f *fixture, d *seedtest.DB) Request {
			return Request{Action: actionid.AttentionSnooze, Target: Target{Entry: "orphan:active-lease-past-expiry:L1"}, Params: AttentionParams{Evidence: "e", For: "1h"}}
		}, check: func(t *testing.T, f *fixture, out Outcome) {}},
	}
}

// renameLease points lock name at lease id (test setup, as the lock's owner would).
func (f *fixture) renameLease(name, id string) {
	f.t.Helper()
	e := locks.ReadFile(f.ws.LocksDir, name)
	rec := e.Record
	rec.LeaseID = id
	if _, err := locks.WriteCAS(f.ws.LocksDir, name, locks.FenceOf(&e.Record), rec); err != nil {
		f.t.Fatal(err)
	}
}

// TestActionsOnSeedDB: every governed action on the supervised system's own DB either
// applies — writing only the columns that DB has, in its own journal mode, its schema
// unchanged — or is refused by its preview with the code its apply refuses with, the
// refusal recorded as refused in the audit log and not one byte of the DB, its journal
// or the lock directory changed. Before the fix the preview allowed and the apply was
// refused (steward's columns missing), after switching the file to WAL.
func TestActionsOnSeedDB(t *testing.T) {
	covered := map[string]bool{}
	for _, tc := range seedActionCases() {
		t.Run(tc.name, func(t *testing.T) {
			f, d := newSeedFixture(t, tc.opt)
			if tc.gitea {
				f.withGitea()
			}
			req := tc.setup(f, d)
			covered[req.Action] = true
			schema, before := f.seedSchema(), f.fingerprint()
			pv, err := f.core.Preview(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if f.fingerprint() != before {
				t.Fatal("the preview changed the DB, its journal or the lock directory")
			}
			out := f.core.Apply(context.Background(), pv, pv.ConfirmPhrase)
			assertOneTerminal(t, f, out.Attempt)
			if tc.refuse != "" {
				if pv.Allowed || pv.Refusal == nil || pv.Refusal.Code != tc.refuse {
					t.Fatalf("preview: allowed=%v %+v, want refused %s", pv.Allowed, pv.Refusal, tc.refuse)
				}
				if out.Result != ResultRefused || out.Code != tc.refuse {
					t.Fatalf("apply: %+v, want refused %s like the preview", out, tc.refuse)
				}
				if f.fingerprint() != before {
					t.Fatal("a refused apply changed the DB, its journal or the lock directory")
				}
				return
			}
			if !pv.Allowed || out.Result != ResultSucceeded {
				t.Fatalf("preview %+v, apply %+v", pv.Refusal, out)
			}
			if got := f.seedSchema(); got != schema {
				t.Fatalf("the schema changed:\n%s\nwas\n%s", got, schema)
			}
			if m := seedtest.JournalMode(t, f.ws.DBPath); m != "delete" {
				t.Fatalf("journal mode %q, want the seed's own (delete)", m)
			}
			tc.check(t, f, out)
		})
	}
	for _, s := range New(Workspace{}, nil, Options{}).Actions() {
		if !covered[s.ID] {
			t.Errorf("action %s has no case on the seed-shaped DB", s.ID)
		}
	}
}

// TestVerifyOnSeedDB: on a DB whose events record no session, an applied reclaim is still
// proven by its own event (the acting attempt is named in the message), never read as
// failed for want of a session_id column.
func TestVerifyOnSeedDB(t *testing.T) {
	f, d := newSeedFixture(t, seedtest.Options{})
	l := seedLease("L1", "s1", "active", 1, 0, int64(os.Getpid()), "")
	l.ExpiresAt = seedtest.Naive(now0.Add(-5 * time.Minute))
	d.AddLease(l)
	_, out, err := f.core.Run(context.Background(), Request{Action: actionid.ReclaimExpired, Target: Target{LeaseID: "L1"}}, "")
	if err != nil || out.Result != ResultSucceeded {
		t.Fatalf("reclaim: %+v %v", out, err)
	}
	var intent Record
	for _, r := range f.records() {
		if r.Attempt == out.Attempt && r.Kind == KindIntent {
			intent = r
		}
	}
	res, why, settled := reclaimExpired{}.verify(context.Background(), f.core, intent)
	if !settled || res != ResultSucceeded {
		t.Fatalf("verify: %s %v settled=%v", res, why, settled)
	}
}
