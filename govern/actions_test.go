package govern

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"steward/gitea"
	"steward/govern/actionid"
	"steward/leases/leaserec"
	"steward/leases/leasestest"
	"steward/locks"
	"steward/locks/lockrec"
	"steward/model"
)

var now0 = leasestest.Now

func ts(d time.Duration) string { return leaserec.FormatTime(now0.Add(d)) }

func work(n int64) leaserec.WorkRef {
	return leaserec.WorkRef{Remote: "origin", Org: "acme", Repo: "widgets", Kind: leaserec.KindIssue, Number: n}
}

func item(n int64) *Item {
	return &Item{Remote: "origin", Org: "acme", Repo: "widgets", Kind: "issue", Number: n}
}

func (f *fixture) host() string { return f.ws.Host }

// expiredLease is an active lease on item n that expired 5 minutes ago.
func (f *fixture) expiredLease(id string, n int64) {
	f.insert(leasestest.Lease{LeaseID: id, SessionID: "s-" + id, Role: "author", TaskClass: "author_issue_work",
		Work: work(n), CreatedAt: ts(-20 * time.Minute), ExpiresAt: ts(-5 * time.Minute), LastHeartbeatAt: ts(-15 * time.Minute),
		OwnerPID: int64(os.Getpid()), OwnerHost: f.host()})
}

func (f *fixture) liveLease(id string, n int64, pid int64, host string) {
	f.insert(leasestest.Lease{LeaseID: id, SessionID: "s-" + id, Role: "author", TaskClass: "author_issue_work",
		Work: work(n), CreatedAt: ts(-2 * time.Minute), ExpiresAt: ts(5 * time.Minute), LastHeartbeatAt: ts(-1 * time.Minute),
		OwnerPID: pid, OwnerHost: host, WorktreePath: filepath.Join(f.ws.RepoRoot, "branches", "feat-"+id)})
}

// lockFile writes a canonical lock for item n expiring at exp, owned by pid; returns its name.
func (f *fixture) lockFile(n int64, exp time.Duration, pid int64) string {
	it := *item(n)
	l := &leaserec.Lease{LeaseID: "", CreatedAt: leaserec.ParseTimestamp(ts(-30 * time.Minute)), ExpiresAt: leaserec.ParseTimestamp(ts(exp))}
	rec := canonicalLock(it, "feat/issue-"+strconv.FormatInt(n, 10), filepath.Join(f.ws.RepoRoot, "branches", "x"), "bot", "author", "s-lock", "tsk-"+strconv.FormatInt(n, 10), pid, f.host(), l)
	name, _ := locks.Name(lockKey(work(n)))
	f.writeLock(name, rec)
	return name
}

func (f *fixture) claim(session string, n int64) Outcome {
	f.t.Helper()
	_, out, err := f.core.Run(context.Background(), Request{Action: actionid.Claim, Target: Target{Item: item(n), Session: session},
		Params: ClaimParams{PID: strconv.Itoa(os.Getpid()), Role: "author", Username: "bot-" + session}}, "")
	if err != nil || out.Result != ResultSucceeded {
		f.t.Fatalf("claim %s #%d: %+v %v", session, n, out, err)
	}
	return out
}

// markedIssue creates an issue carrying the clarification marker, with a worker question.
func (f *fixture) markedIssue() int64 {
	n := f.repo.CreateIssue("maint", "Which API?", "body", "status:blocked-pending-clarification")
	f.repo.AddComment("worker", n, "Should this use the v2 API?")
	return n
}

type actionCase struct {
	name   string
	role   Role
	gitea  bool
	setup  func(f *fixture) Request
	refuse string                                      // "" when allowed
	check  func(t *testing.T, f *fixture, out Outcome) // after a successful apply
	move   func(f *fixture)                            // changes the state between preview and apply
	moved  string                                      // the code the apply refuses with after move
}

func actionCases() []actionCase {
	return []actionCase{
		{name: "reclaim expired", setup: func(f *fixture) Request {
			f.expiredLease("L1", 1)
			return Request{Action: actionid.ReclaimExpired, Target: Target{LeaseID: "L1"}}
		}, check: func(t *testing.T, f *fixture, _ Outcome) {
			if l := f.lease("L1"); l.Status != leaserec.StatusExpired || l.EndReason != "reclaimed" {
				t.Errorf("lease after reclaim: %s %s", l.Status, l.EndReason)
			}
		}, move: func(f *fixture) { f.exec("UPDATE leases SET expires_at = ? WHERE lease_id = 'L1'", ts(-time.Minute)) }, moved: CodeFenceMoved},
		{name: "reclaim live lease refused", setup: func(f *fixture) Request {
			f.liveLease("L1", 1, int64(os.Getpid()), f.host())
			return Request{Action: actionid.ReclaimExpired, Target: Target{LeaseID: "L1"}}
		}, refuse: "not_expired"},
		{name: "reclaim unknown lease", setup: func(f *fixture) Request {
			return Request{Action: actionid.ReclaimExpired, Target: Target{LeaseID: "nope"}}
		}, refuse: CodeNotFound},
		{name: "reclaim as viewer", role: RoleViewer, setup: func(f *fixture) Request {
			f.expiredLease("L1", 1)
			return Request{Action: actionid.ReclaimExpired, Target: Target{LeaseID: "L1"}}
		}, refuse: CodeRoleTooLow},
		{name: "recover a dead claim (reclaim, then retire)", setup: func(f *fixture) Request {
			f.deadClaim(11)
			return Request{Action: actionid.Recover, Target: Target{Item: item(11)}}
		}, check: func(t *testing.T, f *fixture, out Outcome) {
			checkRecovered(t, f, out, 11, leaserec.StatusExpired)
		}, move: func(f *fixture) {
			f.exec("UPDATE leases SET expires_at = ? WHERE status = 'active'", ts(-2*time.Minute))
		}, moved: CodeFenceMoved},
		{name: "recover a stale claim (abandon, then retire)", setup: func(f *fixture) Request {
			f.liveLease("L1", 12, deadPID(f.t), f.host())
			name := f.lockFile(12, 5*time.Minute, deadPID(f.t))
			f.pointLock(name, "L1", "s-L1")
			return Request{Action: actionid.Recover, Target: Target{Item: item(12)}}
		}, check: func(t *testing.T, f *fixture, out Outcome) {
			checkRecovered(t, f, out, 12, leaserec.StatusAbandoned)
		}},
		{name: "recover refused: the claim is live", setup: func(f *fixture) Request {
			f.claim("s1", 13)
			return Request{Action: actionid.Recover, Target: Target{Item: item(13)}}
		}, refuse: "step_refused"},
		{name: "recover: nothing to recover", setup: func(f *fixture) Request {
			return Request{Action: actionid.Recover, Target: Target{Item: item(14)}}
		}, refuse: codeNothingToRecover},
		{name: "recover as viewer", role: RoleViewer, setup: func(f *fixture) Request {
			f.deadClaim(11)
			return Request{Action: actionid.Recover, Target: Target{Item: item(11)}}
		}, refuse: CodeRoleTooLow},
		{name: "abandon dead owner", setup: func(f *fixture) Request {
			f.liveLease("L1", 1, deadPID(f.t), f.host())
			return Request{Action: actionid.AbandonStale, Target: Target{LeaseID: "L1"}}
		}, check: func(t *testing.T, f *fixture, _ Outcome) {
			if l := f.lease("L1"); l.Status != leaserec.StatusAbandoned || l.EndReason != "stale_dead_process" {
				t.Errorf("lease after abandon: %s %s", l.Status, l.EndReason)
			}
		}, move: func(f *fixture) { f.exec("UPDATE leases SET expires_at = ? WHERE lease_id = 'L1'", ts(9*time.Minute)) }, moved: CodeFenceMoved},
		{name: "abandon live owner refused", setup: func(f *fixture) Request {
			f.liveLease("L1", 1, int64(os.Getpid()), f.host())
			if err := os.MkdirAll(filepath.Join(f.ws.RepoRoot, "branches", "feat-L1"), 0o700); err != nil {
				f.t.Fatal(err)
			}
			return Request{Action: actionid.AbandonStale, Target: Target{LeaseID: "L1"}}
		}, refuse: "not_stale"},
		{name: "abandon foreign host is unproven", setup: func(f *fixture) Request {
			f.liveLease("L1", 1, deadPID(f.t), "other-host.example")
			return Request{Action: actionid.AbandonStale, Target: Target{LeaseID: "L1"}}
		}, refuse: codeLivenessUnproven},
		{name: "expire sweep", setup: func(f *fixture) Request {
			f.expiredLease("L1", 1)
			f.expiredLease("L2", 2)
			f.liveLease("L3", 3, int64(os.Getpid()), f.host())
			return Request{Action: actionid.ExpireSweep}
		}, check: func(t *testing.T, f *fixture, _ Outcome) {
			for id, want := range map[string]leaserec.Status{"L1": "expired", "L2": "expired", "L3": "active"} {
				if got := f.lease(id).Status; got != want {
					t.Errorf("%s: %s, want %s", id, got, want)
				}
			}
		}, move: func(f *fixture) { f.clock.Add(10 * time.Minute) }, moved: CodeFenceMoved},
		{name: "expire sweep with nothing to do", setup: func(f *fixture) Request {
			f.liveLease("L3", 3, int64(os.Getpid()), f.host())
			return Request{Action: actionid.ExpireSweep}
		}, refuse: "nothing_to_do"},
		{name: "retire expired lock", setup: func(f *fixture) Request {
			return Request{Action: actionid.RetireLock, Target: Target{LockFile: f.lockFile(4, -time.Minute, deadPID(f.t))}}
		}, check: func(t *testing.T, f *fixture, out Outcome) {
			name, _ := locks.Name(lockKey(work(4)))
			if e := locks.ReadFile(f.ws.LocksDir, name); !e.Missing {
				t.Errorf("live lock still there")
			}
			e := locks.ReadFile(f.ws.LocksDir, out.Detail["archived"])
			if b, ok := e.Record.Recovery(); !ok || b.AuditAttemptID != out.Attempt || b.ActionID != actionid.RetireLock {
				t.Errorf("archive recovery block %+v ok=%v", b, ok)
			}
		}, move: func(f *fixture) {
			name, _ := locks.Name(lockKey(work(4)))
			e := locks.ReadFile(f.ws.LocksDir, name)
			if _, err := locks.WriteCAS(f.ws.LocksDir, name, locks.FenceOf(&e.Record), e.Record); err != nil {
				f.t.Fatal(err)
			}
		}, moved: CodeFenceMoved},
		{name: "retire live lock refused", setup: func(f *fixture) Request {
			return Request{Action: actionid.RetireLock, Target: Target{LockFile: f.lockFile(4, 5*time.Minute, int64(os.Getpid()))}}
		}, refuse: codeFreshForeignLease},
		{name: "retire expired lock with live owner is inspect only", setup: func(f *fixture) Request {
			return Request{Action: actionid.RetireLock, Target: Target{LockFile: f.lockFile(4, -time.Minute, int64(os.Getpid()))}}
		}, refuse: codeInspectOnly},
		{name: "retire outside the locks dir", setup: func(f *fixture) Request {
			return Request{Action: actionid.RetireLock, Target: Target{LockFile: "../../etc/passwd"}}
		}, refuse: CodePathOutside},
		{name: "claim free item", setup: func(f *fixture) Request {
			return Request{Action: actionid.Claim, Target: Target{Item: item(7), Session: "s1"}, Params: ClaimParams{PID: strconv.Itoa(os.Getpid())}}
		}, check: func(t *testing.T, f *fixture, out Outcome) {
			l := f.lease(out.Detail["lease_id"])
			e := locks.ReadFile(f.ws.LocksDir, out.Detail["lock_file"])
			if l.Status != leaserec.StatusActive || e.Missing || e.Record.LeaseID != l.LeaseID {
				t.Errorf("claim: lease %s, lock %+v", l.Status, e.Record.LeaseID)
			}
			if a := lockrec.Assess(&e.Record, f.clock.Now()); a.Contract != lockrec.ContractCanonical {
				t.Errorf("claimed lock is %s: %v", a.Contract, a.Reasons)
			}
		}, move: func(f *fixture) { f.claim("s2", 7) }, moved: CodeClaimedByOther},
		{name: "claim held item is refused and recorded", setup: func(f *fixture) Request {
			f.liveLease("L9", 7, int64(os.Getpid()), f.host())
			return Request{Action: actionid.Claim, Target: Target{Item: item(7), Session: "s1"}, Params: ClaimParams{PID: "1"}}
		}, refuse: CodeClaimedByOther},
		{name: "heartbeat own lease", setup: func(f *fixture) Request {
			out := f.claim("s1", 7)
			f.clock.Add(time.Minute)
			return Request{Action: actionid.Heartbeat, Target: Target{LeaseID: out.Detail["lease_id"], Session: "s1"}}
		}, check: func(t *testing.T, f *fixture, out Outcome) {
			if want := leaserec.FormatTime(f.clock.Now().Add(10 * time.Minute)); out.Detail["expires_at"] != want {
				t.Errorf("expires_at %s, want %s", out.Detail["expires_at"], want)
			}
		}, move: func(f *fixture) {
			f.exec("UPDATE leases SET expires_at = ? WHERE status = 'active'", ts(8*time.Minute))
		}, moved: CodeFenceMoved},
		{name: "heartbeat someone else's lease", setup: func(f *fixture) Request {
			out := f.claim("s1", 7)
			return Request{Action: actionid.Heartbeat, Target: Target{LeaseID: out.Detail["lease_id"], Session: "s2"}}
		}, refuse: CodeNotOwner},
		{name: "release own lease", setup: func(f *fixture) Request {
			out := f.claim("s1", 7)
			return Request{Action: actionid.Release, Target: Target{LeaseID: out.Detail["lease_id"], Session: "s1"}}
		}, check: func(t *testing.T, f *fixture, out Outcome) {
			name, _ := locks.Name(lockKey(work(7)))
			if e := locks.ReadFile(f.ws.LocksDir, name); !e.Missing {
				t.Errorf("lock still live after release")
			}
		}, move: func(f *fixture) { f.exec("UPDATE leases SET status = 'released' WHERE status = 'active'") }, moved: codeAlreadyReleased},
		{name: "answer a clarification", gitea: true, setup: func(f *fixture) Request {
			return Request{Action: actionid.Answer, Target: Target{Item: item(f.markedIssue())}, Params: AnswerParams{Body: "Use **v2**."}}
		}, check: func(t *testing.T, f *fixture, out Outcome) {
			is, err := f.ws.Gitea.GetIssue(context.Background(), 1)
			if err != nil || is.HasLabel("status:blocked-pending-clarification") {
				t.Errorf("label still on: %v %v", is.Labels, err)
			}
			found, c, err := f.ws.Gitea.FindCommentWithMarker(context.Background(), 1, "steward:answer")
			if !found || err != nil || !strings.Contains(c.Body, "Use **v2**.") {
				t.Errorf("answer comment: %v %+v %v", found, c, err)
			}
		}, move: func(f *fixture) { f.repo.RemoveLabel("maint", 1, "status:blocked-pending-clarification") }, moved: "not_marked"},
		{name: "answer an unmarked item", gitea: true, setup: func(f *fixture) Request {
			n := f.repo.CreateIssue("maint", "plain", "body")
			return Request{Action: actionid.Answer, Target: Target{Item: item(n)}, Params: AnswerParams{Body: "x"}}
		}, refuse: "not_marked"},
		{name: "ask for clarification", gitea: true, setup: func(f *fixture) Request {
			n := f.repo.CreateIssue("maint", "unclear", "body")
			out := f.claim("s1", n)
			return Request{Action: actionid.Ask, Target: Target{LeaseID: out.Detail["lease_id"], Session: "s1"}, Params: AskParams{Question: "Which API?"}}
		}, check: func(t *testing.T, f *fixture, out Outcome) {
			is, _ := f.ws.Gitea.GetIssue(context.Background(), 1)
			if !is.HasLabel("status:blocked-pending-clarification") {
				t.Errorf("marker not added: %v", is.Labels)
			}
			if found, _, _ := f.ws.Gitea.FindCommentWithMarker(context.Background(), 1, "steward:ask"); !found {
				t.Errorf("question not posted")
			}
		}, move: func(f *fixture) { f.exec("UPDATE leases SET status = 'released' WHERE status = 'active'") }, moved: codeAlreadyReleased},
		{name: "acknowledge an attention entry", setup: func(f *fixture) Request {
			return ackReq("clarification:acme/widgets#1", "ev", "0")
		}, check: func(t *testing.T, f *fixture, out Outcome) {
			if ms, _, _ := ReadAttention(f.audit.Path()); len(ms) != 1 || ms[0].Attempt != out.Attempt {
				t.Errorf("marks %+v", ms)
			}
		}, move: func(f *fixture) {
			f.runOK(f.t, Request{Action: actionid.AttentionSnooze, Target: Target{Entry: "clarification:acme/widgets#1"}, Params: AttentionParams{Evidence: "ev", For: "1h"}})
		}, moved: CodeFenceMoved},
		{name: "snooze an attention entry", setup: func(f *fixture) Request {
			return Request{Action: actionid.AttentionSnooze, Target: Target{Entry: "source:db"}, Params: AttentionParams{Evidence: "unavailable", For: "30m"}}
		}, check: func(t *testing.T, f *fixture, out Outcome) {
			if ms, _, _ := ReadAttention(f.audit.Path()); len(ms) != 1 || ms[0].Kind != "snooze" {
				t.Errorf("marks %+v", ms)
			}
		}},
		{name: "acknowledge an attention entry twice", setup: func(f *fixture) Request {
			f.runOK(f.t, ackReq("source:db", "unavailable", "1"))
			return ackReq("source:db", "unavailable", "1")
		}, refuse: codeAlreadyAcknowledged},
	}
}

// TestActions proves, for every action: the preview writes nothing at all; a refused
// preview and its apply refuse with the same code; an allowed apply succeeds with its
// effect and leaves exactly one intent and one outcome; and a change between preview and
// apply makes the apply refuse.
func TestActions(t *testing.T) {
	covered := map[string]bool{}
	for _, tc := range actionCases() {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, orRole(tc.role))
			if tc.gitea {
				f.withGitea()
			}
			req := tc.setup(f)
			covered[req.Action] = true
			before := f.state()
			pv, err := f.core.Preview(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if after := f.state(); after != before {
				t.Fatalf("preview wrote something:\nbefore:\n%s\nafter:\n%s", before, after)
			}
			if tc.refuse != "" {
				if pv.Allowed || pv.Refusal == nil || pv.Refusal.Code != tc.refuse {
					t.Fatalf("preview: allowed=%v refusal=%+v, want %s", pv.Allowed, pv.Refusal, tc.refuse)
				}
				if !strings.HasSuffix(pv.Refusal.Message, ".") && !strings.Contains(pv.Refusal.Message, ";") {
					t.Errorf("refusal message does not say what to do: %q", pv.Refusal.Message)
				}
				out := f.core.Apply(context.Background(), pv, pv.ConfirmPhrase)
				if out.Result != ResultRefused || out.Code != tc.refuse || out.Disposition != DispositionNotAttempted {
					t.Fatalf("apply of a refused preview: %+v, want refused %s", out, tc.refuse)
				}
				assertOneTerminal(t, f, out.Attempt)
				return
			}
			if !pv.Allowed {
				t.Fatalf("preview refused: %+v", pv.Refusal)
			}
			if len(pv.Effects) == 0 || len(pv.Fences) == 0 && req.Action != actionid.Answer {
				t.Errorf("preview without effects or fences: %+v", pv)
			}
			out := f.core.Apply(context.Background(), pv, pv.ConfirmPhrase)
			if out.Result != ResultSucceeded {
				t.Fatalf("apply: %+v", out)
			}
			assertOneTerminal(t, f, out.Attempt)
			tc.check(t, f, out)
		})
		if tc.move == nil {
			continue
		}
		t.Run(tc.name+"/state moved", func(t *testing.T) {
			f := newFixture(t, orRole(tc.role))
			if tc.gitea {
				f.withGitea()
			}
			req := tc.setup(f)
			pv, err := f.core.Preview(context.Background(), req)
			if err != nil || !pv.Allowed {
				t.Fatalf("preview: %v %+v", err, pv.Refusal)
			}
			tc.move(f)
			out := f.core.Apply(context.Background(), pv, pv.ConfirmPhrase)
			want := tc.moved
			if want == "" {
				want = CodeFenceMoved
			}
			if out.Result != ResultRefused || out.Code != want {
				t.Fatalf("apply after the state moved: %+v, want refused %s", out, want)
			}
			assertOneTerminal(t, f, out.Attempt)
		})
	}
	for _, s := range New(Workspace{}, nil, Options{}).Actions() {
		if !covered[s.ID] && s.ID != actionid.RestoreLock && s.ID != actionid.Undo && s.ID != actionid.Relabel {
			t.Errorf("action %s has no case in TestActions", s.ID)
		}
	}
}

func orRole(r Role) Role {
	if r == RoleNone {
		return RoleOperator
	}
	return r
}

// assertOneTerminal checks the attempt has exactly one outcome record, after its intent
// when it has one.
func assertOneTerminal(t *testing.T, f *fixture, attempt string) {
	t.Helper()
	var intents, outcomes int
	for _, r := range f.records() {
		if r.Attempt != attempt {
			continue
		}
		switch r.Kind {
		case KindIntent:
			if outcomes > 0 {
				t.Errorf("intent after outcome")
			}
			intents++
		case KindOutcome:
			outcomes++
		}
	}
	if outcomes != 1 || intents > 1 {
		t.Errorf("attempt %s: %d intents, %d outcomes", attempt, intents, outcomes)
	}
}

func TestRefusedClaimIsRecordedAsContention(t *testing.T) {
	f := newFixture(t, RoleOperator)
	f.claim("s1", 7)
	_, out, err := f.core.Run(context.Background(), Request{Action: actionid.Claim, Target: Target{Item: item(7), Session: "s2"}}, "")
	if err != nil || out.Result != ResultRefused || out.Code != CodeClaimedByOther {
		t.Fatalf("second claim: %+v %v", out, err)
	}
	var n int
	if err := f.db().QueryRow(`SELECT count(*) FROM events WHERE event_type = 'claim.refused' AND session_id = 's2'`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("claim.refused events for s2: %d %v", n, err)
	}
}

// readOnlyParams are parameters an action would act on (a claim's pid, an answer's body).
func readOnlyParams(action string) Params {
	switch action {
	case actionid.Claim:
		return ClaimParams{PID: "1"}
	case actionid.Answer:
		return AnswerParams{Body: "yes"}
	}
	return nil
}

// A read-only core refuses every action and writes nothing at all — no row, no lock, and
// no audit record either (before, it appended a refused record to the log
// before; this test compared nothing then).
func TestReadOnlyRefusesEveryApply(t *testing.T) {
	f := newFixture(t, RoleAdmin)
	f.expiredLease("L1", 1)
	ro := f.newCore(RoleAdmin, true)
	before := f.state()
	for _, s := range ro.Actions() {
		req := Request{Action: s.ID, Target: Target{LeaseID: "L1", Item: item(1), Session: "s-L1", LockFile: "x.json", Attempt: "att-x"},
			Params: readOnlyParams(s.ID)}
		pv, _ := ro.Preview(context.Background(), req)
		out := ro.Apply(context.Background(), pv, pv.ConfirmPhrase)
		if pv.Allowed || pv.Refusal == nil || pv.Refusal.Code != CodeReadOnly || out.Code != CodeReadOnly || out.Result != ResultRefused {
			t.Fatalf("%s in read-only: preview %+v, apply %+v", s.ID, pv.Refusal, out)
		}
	}
	if l := f.lease("L1"); l.Status != leaserec.StatusActive {
		t.Fatalf("read-only core changed the lease: %s", l.Status)
	}
	if after := f.state(); after != before {
		t.Fatalf("a read-only core wrote (the audit log, a row or a lock):\nbefore %s\nafter  %s", before, after)
	}
	if _, err := os.Stat(f.audit.Path() + ".inflight"); err == nil {
		t.Fatal("a read-only core created the in-flight folder")
	}
}

func TestDestructiveNeedsTypedPhrase(t *testing.T) {
	f := newFixture(t, RoleOperator)
	name := f.lockFile(4, -time.Minute, deadPID(t))
	pv, _ := f.core.Preview(context.Background(), Request{Action: actionid.RetireLock, Target: Target{LockFile: name}})
	if !pv.Allowed || pv.ConfirmPhrase != "retire acme/widgets#4" || pv.Spec.Tier != TierDestructive {
		t.Fatalf("preview: %+v", pv)
	}
	for _, typed := range []string{"", "retire", "RETIRE acme/widgets#4"} {
		out := f.core.Apply(context.Background(), pv, typed)
		if out.Code != CodeConfirmationRequired {
			t.Fatalf("typed %q: %+v", typed, out)
		}
	}
	if e := locks.ReadFile(f.ws.LocksDir, name); e.Missing {
		t.Fatal("lock retired without the phrase")
	}
}

// TestRetireRefusedAtApplyArchivesNothing: when the lock moves after Apply's re-check —
// its owner rewrites it (a new lock_generation) or releases it — the retire's own
// compare-and-swap under the flock refuses, retired/ stays empty, and the refusal says
// nothing was changed: it claims no archived copy, for none was made.
func TestRetireRefusedAtApplyArchivesNothing(t *testing.T) {
	cases := []struct {
		name string
		move func(t *testing.T, f *fixture, name string)
		code string
		live bool // the live lock file is still there afterwards
	}{
		{"rewritten by its owner", func(t *testing.T, f *fixture, name string) {
			e := locks.ReadFile(f.ws.LocksDir, name)
			if _, err := locks.WriteCAS(f.ws.LocksDir, name, locks.FenceOf(&e.Record), e.Record); err != nil {
				t.Fatal(err)
			}
		}, CodeFenceMoved, true},
		{"released by its owner", func(t *testing.T, f *fixture, name string) {
			if err := os.Remove(filepath.Join(f.ws.LocksDir, name)); err != nil {
				t.Fatal(err)
			}
		}, codeAlreadyReleased, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, RoleOperator)
			name := f.lockFile(4, -time.Minute, deadPID(t))
			c := New(f.ws, f.audit, Options{Actor: f.core.actor, Now: f.clock.Now, Step: func(step string) {
				if step == "intent-written" {
					tc.move(t, f, name)
				}
			}})
			defer c.Close()
			pv, err := c.Preview(context.Background(), Request{Action: actionid.RetireLock, Target: Target{LockFile: name}})
			if err != nil || !pv.Allowed {
				t.Fatalf("preview: %+v %v", pv.Refusal, err)
			}
			out := c.Apply(context.Background(), pv, pv.ConfirmPhrase)
			if out.Result != ResultRefused || out.Code != tc.code {
				t.Fatalf("outcome %+v, want refused %s", out, tc.code)
			}
			if !strings.Contains(out.Message, "nothing") || strings.Contains(out.Message, "archived as") {
				t.Errorf("message %q: want nothing changed and no archived copy named", out.Message)
			}
			if ents, err := os.ReadDir(filepath.Join(f.ws.LocksDir, "retired")); err != nil && !os.IsNotExist(err) ||
				len(ents) != 0 {
				t.Errorf("retired/ holds %v (%v), want nothing", ents, err)
			}
			if e := locks.ReadFile(f.ws.LocksDir, name); e.Missing == tc.live {
				t.Errorf("live lock missing=%v, want %v", e.Missing, !tc.live)
			}
		})
	}
}

// TestRetireSaysWhichArchiveItCouldNotRemove: the lock's owner rewrites it while the retire
// archives it, and the archive just written cannot be removed again (no permission stops
// root's unlink, so a non-empty directory takes its place). The retire is refused
// fence_moved, the owner's write is kept, and the refusal names the archive left in
// retired/ instead of saying nothing was changed.
func TestRetireSaysWhichArchiveItCouldNotRemove(t *testing.T) {
	f := newFixture(t, RoleOperator)
	name := f.lockFile(4, -time.Minute, deadPID(t))
	path := filepath.Join(f.ws.LocksDir, name)
	rdir := filepath.Join(f.ws.LocksDir, "retired")
	var left string
	var next []byte
	c := New(f.ws, f.audit, Options{Actor: f.core.actor, Now: f.clock.Now, Step: func(step string) {
		if step != "lock-dir-synced" || left != "" {
			return
		}
		ents, err := os.ReadDir(rdir)
		if err != nil || len(ents) != 1 {
			t.Fatalf("retired/ holds %v (%v), want the archive alone", ents, err)
		}
		left = ents[0].Name()
		old, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		next = append(old, ' ')
		if err := os.WriteFile(path, next, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(filepath.Join(rdir, left), filepath.Join(f.dir, "saved")); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(rdir, left, "x"), 0o700); err != nil {
			t.Fatal(err)
		}
	}})
	defer c.Close()
	pv, err := c.Preview(context.Background(), Request{Action: actionid.RetireLock, Target: Target{LockFile: name}})
	if err != nil || !pv.Allowed {
		t.Fatalf("preview: %+v %v", pv.Refusal, err)
	}
	out := c.Apply(context.Background(), pv, pv.ConfirmPhrase)
	if left == "" {
		t.Fatal("the archive's lock-dir-synced step was never reached")
	}
	if out.Result != ResultRefused || out.Code != CodeFenceMoved {
		t.Fatalf("outcome %+v, want refused fence_moved", out)
	}
	if !strings.Contains(out.Message, "retired/"+left) || strings.Contains(out.Message, "nothing was changed") {
		t.Errorf("message %q: want the archive left behind, retired/%s, named, and no claim that nothing changed",
			out.Message, left)
	}
	if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, next) {
		t.Errorf("the live lock lost its owner's write: %v", err)
	}
}

func TestUndoRestoresARetiredLockOnlyIfUnclaimed(t *testing.T) {
	f := newFixture(t, RoleOperator)
	name := f.lockFile(4, -time.Minute, deadPID(t))
	pv, _ := f.core.Preview(context.Background(), Request{Action: actionid.RetireLock, Target: Target{LockFile: name}})
	ret := f.core.Apply(context.Background(), pv, pv.ConfirmPhrase)
	if ret.Result != ResultSucceeded {
		t.Fatalf("retire: %+v", ret)
	}
	undoReq := Request{Action: actionid.Undo, Target: Target{Attempt: ret.Attempt}}
	before := f.state()
	upv, err := f.core.Preview(context.Background(), undoReq)
	if err != nil || !upv.Allowed || f.state() != before {
		t.Fatalf("undo preview: %v %+v", err, upv.Refusal)
	}
	if out := f.core.Apply(context.Background(), upv, ""); out.Result != ResultSucceeded {
		t.Fatalf("undo: %+v", out)
	}
	if e := locks.ReadFile(f.ws.LocksDir, name); e.Missing {
		t.Fatal("undo did not restore the lock")
	}
	// A second undo of the same attempt is refused.
	if _, out, _ := f.core.Run(context.Background(), undoReq, ""); out.Code != "already_undone" {
		t.Fatalf("second undo: %+v", out)
	}
	// Retire again, let a worker claim the item, and undo must refuse.
	pv, _ = f.core.Preview(context.Background(), Request{Action: actionid.RetireLock, Target: Target{LockFile: name}})
	ret = f.core.Apply(context.Background(), pv, pv.ConfirmPhrase)
	f.claim("s9", 4)
	if _, out, _ := f.core.Run(context.Background(), Request{Action: actionid.Undo, Target: Target{Attempt: ret.Attempt}}, ""); out.Code != codeClaimedSince {
		t.Fatalf("undo after a new claim: %+v", out)
	}
}

func TestUndoOfAnswerReAddsTheMarker(t *testing.T) {
	f := newFixture(t, RoleOperator)
	f.withGitea()
	// A worker asks as clarification.ask does: its question, then the marker label (the
	// answer is bound to that question, which stays the question after the undo).
	n := f.repo.CreateIssue("maint", "Which API?", "body")
	f.repo.AddComment("worker", n, "Should this use the v2 API?")
	f.repo.AddLabel("worker", n, "status:blocked-pending-clarification")
	_, out, err := f.core.Run(context.Background(), Request{Action: actionid.Answer, Target: Target{Item: item(n)}, Params: AnswerParams{Body: "yes"}}, "")
	if err != nil || out.Result != ResultSucceeded {
		t.Fatalf("answer: %+v %v", out, err)
	}
	if _, u, _ := f.core.Run(context.Background(), Request{Action: actionid.Undo, Target: Target{Attempt: out.Attempt}}, ""); u.Result != ResultSucceeded {
		t.Fatalf("undo: %+v", u)
	}
	is, _ := f.ws.Gitea.GetIssue(context.Background(), n)
	if !is.HasLabel("status:blocked-pending-clarification") {
		t.Fatalf("marker not re-added: %v", is.Labels)
	}
	// Answering again with the same text finds the first comment and does not post twice.
	_, again, _ := f.core.Run(context.Background(), Request{Action: actionid.Answer, Target: Target{Item: item(n)}, Params: AnswerParams{Body: "yes"}}, "")
	if again.Result != ResultSucceeded || !strings.Contains(strings.Join(again.Effects, " "), "not posted again") {
		t.Fatalf("second answer: %+v", again)
	}
	cs, _ := f.ws.Gitea.(*gitea.Client).ListComments(context.Background(), n)
	posted := 0
	for _, c := range cs {
		if strings.Contains(c.Body, "steward:answer") {
			posted++
		}
	}
	if posted != 1 {
		t.Fatalf("%d answer comments, want 1", posted)
	}
}

func TestAuditNeverHoldsTheToken(t *testing.T) {
	f := newFixture(t, RoleOperator)
	f.withGitea()
	n := f.markedIssue()
	f.core.Run(context.Background(), Request{Action: actionid.Answer, Target: Target{Item: item(n)}, Params: AnswerParams{Body: "see https://u:" + testToken + "@host/x token=" + testToken}}, "")
	data, _ := os.ReadFile(f.audit.Path())
	if strings.Contains(string(data), testToken) || len(data) == 0 {
		t.Fatalf("token in audit log (%d bytes)", len(data))
	}
}

func TestMessagesAreCappedWithEllipsis(t *testing.T) {
	long := strings.Repeat("é", 900)
	got := Cap(long)
	if n := len([]rune(got)); n != 800 || !strings.HasSuffix(got, "…") {
		t.Fatalf("cap: %d runes", n)
	}
	if Cap("short") != "short" {
		t.Fatal("short text changed")
	}
}

func TestAuditFileMode(t *testing.T) {
	f := newFixture(t, RoleOperator)
	f.expiredLease("L1", 1)
	f.core.Run(context.Background(), Request{Action: actionid.ReclaimExpired, Target: Target{LeaseID: "L1"}}, "")
	fi, err := os.Stat(f.audit.Path())
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("audit mode %v %v", fi.Mode(), err)
	}
	var rec map[string]any
	line := strings.SplitN(string(mustRead(t, f.audit.Path())), "\n", 2)[0]
	if err := json.Unmarshal([]byte(line), &rec); err != nil || rec["kind"] != "intent" || rec["actor"] == nil {
		t.Fatalf("first record %v: %v", err, rec)
	}
}

func mustRead(t *testing.T, p string) []byte {
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var _ = fmt.Sprint

// TestRegistryIsTheTableOfIDs: the core registers exactly the actions the one table of ids
// names, in its order, each once — an action added to one and not the other fails here.
func TestRegistryIsTheTableOfIDs(t *testing.T) {
	var got []string
	for _, a := range registry() {
		got = append(got, a.spec().ID)
	}
	if want := actionid.All(); !slices.Equal(got, want) {
		t.Errorf("registry ids:\n%q\nthe table (package actionid):\n%q", got, want)
	}
	c := New(Workspace{}, nil, Options{})
	var specs []string
	for _, s := range c.Actions() {
		specs = append(specs, s.ID)
	}
	if want := slices.Sorted(slices.Values(actionid.All())); !slices.Equal(specs, want) {
		t.Errorf("Core.Actions ids %q, want the table's %q", specs, want)
	}
}

func TestAnnotate(t *testing.T) {
	f := newFixture(t, RoleViewer)
	f.expiredLease("L1", 1)
	f.liveLease("L2", 2, int64(os.Getpid()), f.host())
	snap := &model.Snapshot{Orphans: []*model.Orphan{
		{Kind: "active-lease-past-expiry", Action: &model.ActionRef{ID: actionid.ReclaimExpired, Target: model.ActionTarget{LeaseID: "L1"}}},
		{Kind: "active-lease-past-expiry", Action: &model.ActionRef{ID: actionid.ReclaimExpired, Target: model.ActionTarget{LeaseID: "L2"}}},
		{Kind: "expired-lock-live-owner", InspectOnlyReason: "owner alive"},
	}}
	before := f.state()
	got := f.core.Annotate(context.Background(), snap)
	if f.state() != before {
		t.Fatal("annotate wrote something")
	}
	if snap.Orphans[0].Action.Allowed != nil {
		t.Fatal("annotate changed its input")
	}
	a0, a1 := got.Orphans[0].Action, got.Orphans[1].Action
	if a0.Allowed == nil || !*a0.Allowed || a0.Refusal != nil {
		t.Errorf("expired lease: %+v", a0)
	}
	if a1.Allowed == nil || *a1.Allowed || a1.Refusal == nil || a1.Refusal.Code != "not_expired" {
		t.Errorf("live lease: %+v %+v", a1, a1.Refusal)
	}
	if got.Orphans[2].Action != nil {
		t.Errorf("inspect-only orphan got an action")
	}
}
