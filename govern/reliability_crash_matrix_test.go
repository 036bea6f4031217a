package govern

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"steward/gitea/gitearec"
	"steward/govern/actionid"
	"steward/leases/leaserec"
	"steward/locks"
)

// The crash matrix (the core never makes things worse, and this keeps it so): every
// governed action a worker or a
// supervisor takes is killed with SIGKILL at each of its write steps — the audit log's
// in-flight flock, the intent, every flock, temp write, fsync, rename, unlink and directory
// fsync of a lock file, every DB commit, every Gitea request — in a child process, on a
// fresh real workspace (files, SQLite, an in-process Gitea for the answer). Then `audit
// verify` runs and the matrix asserts:
//
//   - every attempt has exactly one terminal record;
//   - none stays unknown where the evidence can tell: the state read independently of the
//     verifier is the old one (verify says failed), the new one (succeeded), or a named
//     partial state the evidence cannot settle (unknown) — anything else fails;
//   - never a torn lock file (live or archived);
//   - never a live lock lost without its archive;
//   - never two active leases for one item;
//   - never a duplicated comment — also after the action is applied again to finish a
//     partial state.
//
// The kill points are not listed by hand: each action is first run to the end in a child
// that prints every step it passes, and the matrix kills at each of them. The short form
// (every `go test`, so `.ci/run`) kills at the first time each step name is passed. The
// long form — STEWARD_CRASH_MATRIX=long — kills at every occurrence of every step, then
// runs STEWARD_CRASH_LOOP (default 200) random kills: a child killed after a random delay
// within the action's measured duration, wherever it is. Its last numbers are in
// docs/reliability.md.

// crashAction is one row of the matrix.
type crashAction struct {
	name  string
	gitea bool
	// setup prepares the workspace and returns the child's environment.
	setup func(f *fixture) []string
	// state reads the sources independently of the verifier: "old", "new", or a named
	// partial state; it fails the test on any state that must never be.
	state func(t *testing.T, f *fixture) string
	// partial lists the partial states the evidence cannot settle (verify leaves them
	// unknown), each with how the work is finished (nil: left for a human, state kept).
	partial map[string]func(t *testing.T, f *fixture)
}

func crashActions() []crashAction {
	var retireLive []byte
	return []crashAction{
		{name: actionid.Claim,
			setup: func(f *fixture) []string { return []string{"CHILD_ACTION=" + actionid.Claim, "CHILD_ITEM=7"} },
			state: func(t *testing.T, f *fixture) string {
				return map[string]string{"old": "old", "new": "new", "lease-only": "lease-without-lock"}[claimStateOf(t, f, 7)]
			},
			partial: map[string]func(t *testing.T, f *fixture){"lease-without-lock": nil}},
		{name: actionid.Claim + " (its lock write fails)",
			setup: func(f *fixture) []string {
				name, _ := locks.Name(lockKey(work(7)))
				if err := os.Mkdir(filepath.Join(f.ws.LocksDir, "."+name+".flock"), 0o700); err != nil {
					f.t.Fatal(err)
				}
				return []string{"CHILD_ACTION=" + actionid.Claim, "CHILD_ITEM=7"}
			},
			// Compensated (the lease released again) is the old state: nothing of the claim
			// remains, and verify says failed.
			state: func(t *testing.T, f *fixture) string {
				return map[string]string{"old": "old", "lease-only": "lease-without-lock"}[claimStateOf(t, f, 7)]
			},
			partial: map[string]func(t *testing.T, f *fixture){"lease-without-lock": nil}},
		{name: actionid.Heartbeat,
			setup: func(f *fixture) []string {
				out := f.claim("s-child", 7)
				f.clock.Add(time.Minute)
				return []string{"CHILD_ACTION=" + actionid.Heartbeat, "CHILD_LEASE=" + out.Detail["lease_id"], "CHILD_SESSION=s-child"}
			},
			state: heartbeatState,
			partial: map[string]func(t *testing.T, f *fixture){"lease-renewed-lock-behind": func(t *testing.T, f *fixture) {
				f.runOK(t, Request{Action: actionid.Heartbeat, Target: Target{LeaseID: f.activeLeases(7)[0].LeaseID, Session: "s-child"}})
			}}},
		{name: actionid.Release,
			setup: func(f *fixture) []string {
				out := f.claim("s-child", 7)
				return []string{"CHILD_ACTION=" + actionid.Release, "CHILD_LEASE=" + out.Detail["lease_id"], "CHILD_SESSION=s-child"}
			},
			state:   releaseState,
			partial: map[string]func(t *testing.T, f *fixture){"lease-released-lock-live": nil}},
		{name: actionid.RetireLock,
			setup: func(f *fixture) []string {
				name := f.lockFile(4, -time.Minute, deadPID(f.t))
				retireLive = mustRead(f.t, filepath.Join(f.ws.LocksDir, name))
				return []string{"CHILD_ACTION=" + actionid.RetireLock, "CHILD_LOCK=" + name}
			},
			state: func(t *testing.T, f *fixture) string { return retireMatrixState(t, f, retireLive) },
			partial: map[string]func(t *testing.T, f *fixture){"archived-and-live": func(t *testing.T, f *fixture) {
				name, _ := locks.Name(lockKey(work(4)))
				f.runOK(t, Request{Action: actionid.RetireLock, Target: Target{LockFile: name}})
			}}},
		{name: actionid.ReclaimExpired,
			setup: func(f *fixture) []string {
				f.expiredLease("L1", 1)
				return []string{"CHILD_ACTION=" + actionid.ReclaimExpired, "CHILD_LEASE=L1"}
			},
			state: func(t *testing.T, f *fixture) string { return leaseEndState(t, f, leaserec.StatusExpired, "reclaimed") }},
		{name: actionid.AbandonStale,
			setup: func(f *fixture) []string {
				f.liveLease("L1", 1, deadPID(f.t), f.host())
				return []string{"CHILD_ACTION=" + actionid.AbandonStale, "CHILD_LEASE=L1"}
			},
			state: func(t *testing.T, f *fixture) string {
				return leaseEndState(t, f, leaserec.StatusAbandoned, "stale_dead_process")
			}},
		{name: actionid.Recover + " (reclaim, then retire)",
			setup: func(f *fixture) []string {
				f.deadClaim(8)
				return []string{"CHILD_ACTION=" + actionid.Recover, "CHILD_ITEM=8"}
			},
			state: recoverMatrixState,
			partial: map[string]func(t *testing.T, f *fixture){
				"lease-ended-lock-live": func(t *testing.T, f *fixture) {
					f.runOK(t, Request{Action: actionid.Recover, Target: Target{Item: item(8)}})
				},
				"lease-ended-lock-archived-and-live": func(t *testing.T, f *fixture) {
					f.runOK(t, Request{Action: actionid.Recover, Target: Target{Item: item(8)}})
				}}},
		{name: actionid.Undo + " (of a retire)",
			setup: func(f *fixture) []string {
				name := f.lockFile(4, -time.Minute, deadPID(f.t))
				_, out, err := f.core.Run(context.Background(), Request{Action: actionid.RetireLock, Target: Target{LockFile: name}}, "retire acme/widgets#4")
				if err != nil || out.Result != ResultSucceeded {
					f.t.Fatalf("retire: %+v %v", out, err)
				}
				return []string{"CHILD_ACTION=" + actionid.Undo, "CHILD_ATTEMPT=" + out.Attempt}
			},
			state: undoRetireState},
		{name: actionid.Answer, gitea: true,
			setup: func(f *fixture) []string {
				n := f.repo.CreateIssue("maint", "Which API?", "body")
				f.repo.AddComment("worker", n, "Should this use the v2 API?")
				f.repo.AddLabel("worker", n, "status:blocked-pending-clarification")
				return []string{"CHILD_ACTION=" + actionid.Answer, "CHILD_ITEM=" + strconv.FormatInt(n, 10), "CHILD_BODY=Use v2."}
			},
			state: answerState,
			partial: map[string]func(t *testing.T, f *fixture){"answer-posted-label-on": func(t *testing.T, f *fixture) {
				f.runOK(t, Request{Action: actionid.Answer, Target: Target{Item: item(1)}, Params: AnswerParams{Body: "Use v2."}})
			}}},
		{name: actionid.AttentionAck,
			setup: func(f *fixture) []string {
				// An earlier mark of another entry: the child's must not tear or hide it.
				f.runOK(f.t, ackReq("source:db", "unavailable", "0"))
				return []string{"CHILD_ACTION=" + actionid.AttentionAck, "CHILD_ENTRY=clarification:acme/widgets#1", "CHILD_EVIDENCE=e"}
			},
			state: func(t *testing.T, f *fixture) string {
				return attentionState(t, f, "clarification:acme/widgets#1", "ack")
			}},
		{name: actionid.AttentionSnooze,
			setup: func(f *fixture) []string {
				return []string{"CHILD_ACTION=" + actionid.AttentionSnooze, "CHILD_ENTRY=orphan:x", "CHILD_EVIDENCE=e", "CHILD_FOR=1h"}
			},
			state: func(t *testing.T, f *fixture) string { return attentionState(t, f, "orphan:x", "snooze") }},
	}
}

// runOK previews and applies req through the fixture's core; it must succeed.
func (f *fixture) runOK(t *testing.T, req Request) {
	t.Helper()
	pv, err := f.core.Preview(context.Background(), req)
	if err != nil || !pv.Allowed {
		t.Fatalf("%s: preview %+v %v", req.Action, pv.Refusal, err)
	}
	if out := f.core.Apply(context.Background(), pv, pv.ConfirmPhrase); out.Result != ResultSucceeded {
		t.Fatalf("%s: %+v", req.Action, out)
	}
}

// attentionState: the entry has no mark (old) or exactly one of the kind (new); every line
// of the attention file decodes, and the setup's marks are all still there.
func attentionState(t *testing.T, f *fixture, entry, kind string) string {
	ms, finds, err := ReadAttention(f.audit.Path())
	if err != nil || len(finds) > 0 {
		t.Fatalf("attention file: %v %+v", err, finds)
	}
	n := 0
	for _, m := range ms {
		if m.Entry == entry {
			if m.Kind != kind {
				t.Fatalf("mark %+v", m)
			}
			n++
		}
	}
	if others, want := len(ms)-n, map[bool]int{true: 1, false: 0}[kind == "ack"]; others != want {
		t.Fatalf("the setup's mark is gone: %+v", ms)
	}
	switch n {
	case 0:
		return "old"
	case 1:
		return "new"
	}
	t.Fatalf("%d marks of %s: a duplicate", n, entry)
	return ""
}

func heartbeatState(t *testing.T, f *fixture) string {
	ls := f.activeLeases(7)
	if len(ls) != 1 {
		t.Fatalf("%d active leases on the heartbeated item", len(ls))
	}
	l := ls[0]
	name, _ := locks.Name(lockKey(work(7)))
	e := locks.ReadFile(f.ws.LocksDir, name)
	if e.Missing || e.Unreadable != nil || e.Record.WorkLease == nil {
		t.Fatalf("the heartbeated lock is missing or unreadable: %+v", e.Unreadable)
	}
	lockExp := e.Record.WorkLease.ExpiresAt
	switch {
	case l.HeartbeatCount == 0 && lockExp.Valid && lockExp.Time.Equal(l.ExpiresAt.Time):
		return "old"
	case l.HeartbeatCount >= 1 && lockExp.Valid && lockExp.Time.Equal(l.ExpiresAt.Time):
		return "new"
	case l.HeartbeatCount >= 1:
		return "lease-renewed-lock-behind"
	}
	t.Fatalf("heartbeat state: %d heartbeats, lease until %s, lock until %s", l.HeartbeatCount, l.ExpiresAt.Raw, lockExp.Text)
	return ""
}

func releaseState(t *testing.T, f *fixture) string {
	active := f.activeLeases(7)
	name, _ := locks.Name(lockKey(work(7)))
	live := locks.ReadFile(f.ws.LocksDir, name)
	if !live.Missing && live.Unreadable != nil {
		t.Fatalf("torn lock %s", name)
	}
	switch {
	case len(active) == 1 && !live.Missing:
		return "old"
	case len(active) == 0 && live.Missing:
		return "new"
	case len(active) == 0:
		return "lease-released-lock-live"
	}
	t.Fatalf("release state: %d active leases, lock missing %v", len(active), live.Missing)
	return ""
}

func retireMatrixState(t *testing.T, f *fixture, before []byte) string {
	name, _ := locks.Name(lockKey(work(4)))
	live := locks.ReadFile(f.ws.LocksDir, name)
	snap, err := locks.LoadDir(f.ws.LocksDir, locks.LoadOptions{Retired: true})
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case !live.Missing && len(snap.Retired) == 0:
		if got := mustRead(t, live.Path); string(got) != string(before) {
			t.Fatalf("the live lock changed:\n%s", got)
		}
		return "old"
	case !live.Missing && len(snap.Retired) == 1:
		return "archived-and-live"
	case live.Missing && len(snap.Retired) >= 1:
		return "new" // a second archive when a retire killed between its two steps was applied again
	}
	t.Fatalf("retire state: live missing %v, %d archives", live.Missing, len(snap.Retired))
	return ""
}

// recoverMatrixState reads a recover of item 8: the lease ends first, then the lock is
// retired; the lock is never gone while the lease is active.
func recoverMatrixState(t *testing.T, f *fixture) string {
	name, _ := locks.Name(lockKey(work(8)))
	live := locks.ReadFile(f.ws.LocksDir, name)
	snap, err := locks.LoadDir(f.ws.LocksDir, locks.LoadOptions{Retired: true})
	if err != nil {
		t.Fatal(err)
	}
	active := len(f.activeLeases(8)) > 0
	switch {
	case active && !live.Missing && len(snap.Retired) == 0:
		return "old"
	case !active && !live.Missing && len(snap.Retired) == 0:
		return "lease-ended-lock-live"
	case !active && !live.Missing:
		return "lease-ended-lock-archived-and-live"
	case !active && live.Missing && len(snap.Retired) >= 1:
		return "new"
	}
	t.Fatalf("recover state: active lease %v, live lock missing %v, %d archives", active, live.Missing, len(snap.Retired))
	return ""
}

func leaseEndState(t *testing.T, f *fixture, st leaserec.Status, reason string) string {
	l := f.lease("L1")
	switch {
	case l.Status == leaserec.StatusActive:
		return "old"
	case l.Status == st && l.EndReason == reason:
		return "new"
	}
	t.Fatalf("partial lease state %s/%s", l.Status, l.EndReason)
	return ""
}

func undoRetireState(t *testing.T, f *fixture) string {
	name, _ := locks.Name(lockKey(work(4)))
	live := locks.ReadFile(f.ws.LocksDir, name)
	switch {
	case live.Missing:
		return "old"
	case live.Unreadable == nil && live.Record.TaskSessionID() == "tsk-4" && live.Record.Generation() == 2:
		return "new"
	}
	t.Fatalf("restore state: %+v generation %d", live.Unreadable, live.Record.Generation())
	return ""
}

func answerState(t *testing.T, f *fixture) string {
	th, err := f.ws.Gitea.Thread(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	answers := 0
	for _, c := range th.Comments {
		if m, ok := gitearec.TrailingMark(c.Body); ok && m.Kind == "answer" && c.Author == "maint" {
			answers++
		}
	}
	on := th.Issue.HasLabel("status:blocked-pending-clarification")
	switch {
	case answers == 0 && on:
		return "old"
	case answers == 1 && !on:
		return "new"
	case answers == 1 && on:
		return "answer-posted-label-on"
	}
	t.Fatalf("answer state: %d answers by steward (a duplicate?), label on %v", answers, on)
	return ""
}

// workspaceInvariants holds after every kill: no torn lock file, no live lock lost without
// its archive (before names the live locks and their task sessions before the attempt),
// never two active leases on one item.
func workspaceInvariants(t *testing.T, f *fixture, before map[string]string) {
	t.Helper()
	snap, err := locks.LoadDir(f.ws.LocksDir, locks.LoadOptions{Retired: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range append(snap.Live, snap.Retired...) {
		if e.Unreadable != nil {
			t.Fatalf("torn lock file %s: %+v", e.Name, e.Unreadable)
		}
	}
	for name, tsk := range before {
		kept := false
		for _, e := range snap.Live {
			kept = kept || (e.Name == name && e.Record.TaskSessionID() == tsk)
		}
		for _, e := range snap.Retired {
			b, ok := e.Record.Recovery()
			kept = kept || (ok && b.LiveName == name && b.PriorTaskSessionID == tsk)
		}
		if !kept {
			t.Fatalf("live lock %s (task session %s) is gone without an archive", name, tsk)
		}
	}
	var n, max int
	if err := f.db().QueryRow(`SELECT count(*), coalesce(max(c), 0) FROM (SELECT count(*) AS c FROM leases WHERE status = 'active' GROUP BY work_item_id) AS per_item`).Scan(&n, &max); err != nil {
		t.Fatal(err)
	}
	if max > 1 {
		t.Fatalf("an item holds %d active leases", max)
	}
}

func liveLocks(t *testing.T, f *fixture) map[string]string {
	snap, err := locks.LoadDir(f.ws.LocksDir, locks.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, e := range snap.Live {
		m[e.Name] = e.Record.TaskSessionID()
	}
	return m
}

// matrixFixture is a fresh workspace for one row, with Gitea when the action needs it.
func matrixFixture(t *testing.T, a crashAction, backend string) (*fixture, []string) {
	f := newFixtureOn(t, RoleOperator, backend)
	if a.gitea {
		f.withGitea()
	}
	env := a.setup(f)
	if a.gitea {
		env = append(env, "CHILD_GITEA_URL="+f.giteaURL, "CHILD_GITEA_TOKEN="+testToken)
	}
	return f, env
}

// killPoint is one step occurrence: the n-th time the step named is passed.
type killPoint struct {
	step string
	n    int
}

func (k killPoint) String() string {
	if k.n == 1 {
		return k.step
	}
	return fmt.Sprintf("%s#%d", k.step, k.n)
}

// killPoints runs the action to the end in a child that prints every step it passes, and
// returns them in order with the run's wall time. all: every occurrence, else the first of
// each name.
func killPoints(t *testing.T, a crashAction, backend string, all bool) ([]killPoint, time.Duration) {
	f, env := matrixFixture(t, a, backend)
	cmd := f.child("steps", env...)
	out, err := cmd.Output()
	if err != nil || !strings.Contains(string(out), "result ") {
		t.Fatalf("%s to the end: %v\n%s", a.name, err, out)
	}
	seen := map[string]int{}
	var ks []killPoint
	var took time.Duration
	for _, line := range strings.Split(string(out), "\n") {
		if ns, ok := strings.CutPrefix(line, "took "); ok {
			n, _ := strconv.ParseInt(ns, 10, 64)
			took = time.Duration(n)
		}
		step, ok := strings.CutPrefix(line, "step ")
		if !ok {
			continue
		}
		seen[step]++
		if all || seen[step] == 1 {
			ks = append(ks, killPoint{step, seen[step]})
		}
	}
	if len(ks) == 0 || took <= 0 {
		t.Fatalf("%s passed no step (or took no time): %s", a.name, out)
	}
	return ks, took
}

// matrixTally counts what the matrix saw, per action.
type matrixTally struct {
	kills, runs, randomKills           int
	states                             map[string]int
	failed, succeeded, unknown, finish int
}

// checkAfterKill verifies and asserts the matrix's invariants after the child ended (killed
// or not); it returns the state seen.
func checkAfterKill(t *testing.T, f *fixture, a crashAction, before map[string]string, tally *matrixTally) string {
	t.Helper()
	recs := f.records()
	atts := Attempts(recs)
	// The setup's own attempts are finished; the child's is the last, if it wrote an intent.
	var mine *Attempt
	for i := range atts {
		if atts[i].Intent != nil && atts[i].Intent.Actor.OSUser == "child" {
			mine = &atts[i]
		}
	}
	if mine != nil {
		awaitServerDone(t, f, mine.ID)
	}
	state := a.state(t, f)
	tally.states[state]++
	workspaceInvariants(t, f, before)
	if mine == nil {
		if state != "old" {
			t.Fatalf("no attempt recorded, yet the state is %s", state)
		}
		return state
	}
	vs, err := f.core.Verify(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range Attempts(f.records()) {
		if x.Outcomes != 1 {
			t.Fatalf("attempt %s has %d terminal records", x.ID, x.Outcomes)
		}
	}
	got := Attempts(f.records())
	var now Attempt
	for _, x := range got {
		if x.ID == mine.ID {
			now = x
		}
	}
	status := now.Status()
	switch status {
	case ResultFailed:
		tally.failed++
	case ResultSucceeded:
		tally.succeeded++
	case ResultUnknown:
		tally.unknown++
	}
	if mine.Outcome != nil {
		// The child finished: its own outcome stands (it was not killed, or killed after it).
		if status == ResultUnknown {
			t.Fatalf("the finished attempt is unknown: %+v", now.Outcome)
		}
		return state
	}
	finish, isPartial := a.partial[state]
	want := map[string]Result{"old": ResultFailed, "new": ResultSucceeded}[state]
	if isPartial {
		want = ResultUnknown
	}
	if want == "" {
		t.Fatalf("state %s is neither old, new nor a known partial state", state)
	}
	if status != want {
		t.Fatalf("state %s: the attempt is %s after verify (%+v); want %s", state, status, vs, want)
	}
	if isPartial && finish != nil {
		finish(t, f)
		tally.finish++
		if s := a.state(t, f); s != "new" {
			t.Fatalf("after finishing the partial state %s: %s", state, s)
		}
		workspaceInvariants(t, f, before)
	}
	return state
}

// awaitServerDone returns once the control-plane DB runs no transaction of the attempt. A
// killed child's connection ends on the server only when the server reads the closed
// socket: until then a transaction the child opened "before commit" is still open there
// (idle in transaction, named by the attempt in its application_name), and verify leaves the
// attempt alone — rightly, and the matrix read that as a flake: unknown where the evidence
// says failed. The condition is the server's own (pg_stat_activity, through the core's
// pendingOnDB, as verify asks it), polled until it holds; on SQLite the kernel released the
// child's locks with the process and there is nothing to wait for.
func awaitServerDone(t *testing.T, f *fixture, attempt string) {
	t.Helper()
	if !f.pg {
		return
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		bs, err := f.core.pendingOnDB(context.Background(), attempt)
		if err != nil {
			t.Fatalf("reading pg_stat_activity: %v", err)
		}
		if len(bs) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server still runs attempt %s's transaction two minutes after its client died: %+v", attempt, bs)
		}
		time.Sleep(5 * time.Millisecond) // the poll's interval: the condition above is the synchronisation
	}
}

// awaitUnfinished is awaitServerDone for every attempt of the audit log without an outcome:
// a killed child's.
func awaitUnfinished(t *testing.T, f *fixture) {
	t.Helper()
	for _, a := range Attempts(f.records()) {
		if a.Outcome == nil {
			awaitServerDone(t, f, a.ID)
		}
	}
}

// TestCrashMatrix: see the comment at the top of the file.
func TestCrashMatrix(t *testing.T) {
	long := os.Getenv("STEWARD_CRASH_MATRIX") == "long"
	loops := 0
	if long {
		loops = 200
		if n, err := strconv.Atoi(os.Getenv("STEWARD_CRASH_LOOP")); err == nil {
			loops = n
		}
	}
	start := time.Now()
	tallies := map[string]*matrixTally{}
	durations := map[string]time.Duration{}
	actions := crashActions()
	// The DB transitions the dedicated tests do not kill on PostgreSQL (claim and reclaim:
	// TestClaimCrashAtEveryStep, TestCrashAtEveryStep) run there too.
	onPG := map[string]bool{actionid.Claim + " (its lock write fails)": true, actionid.Heartbeat: true, actionid.Release: true,
		actionid.AbandonStale: true}
	type row struct {
		a       crashAction
		backend string
	}
	var rows []row
	for _, a := range actions {
		rows = append(rows, row{a, "sqlite"})
	}
	for _, a := range actions {
		if onPG[a.name] {
			rows = append(rows, row{a, "postgres"})
		}
	}
	for _, rw := range rows {
		a, backend := rw.a, rw.backend
		name := a.name
		if backend != "sqlite" {
			name += " on " + backend
		}
		tally := &matrixTally{states: map[string]int{}}
		tallies[name] = tally
		t.Run(name, func(t *testing.T) {
			points, took := killPoints(t, a, backend, long)
			durations[a.name] = max(durations[a.name], took)
			for _, k := range points {
				t.Run(k.String(), func(t *testing.T) {
					f, env := matrixFixture(t, a, backend)
					before := liveLocks(t, f)
					err := f.child("killat", append(env, "CHILD_STEP="+k.step, "CHILD_STEP_N="+strconv.Itoa(k.n))...).Run()
					var ee *exec.ExitError
					if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
						t.Fatalf("the child was not killed at %s: %v", k, err)
					}
					tally.kills++
					state := checkAfterKill(t, f, a, before, tally)
					t.Logf("killed at %s: %s", k, state)
				})
			}
		})
	}
	if loops > 0 {
		t.Run("random", func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 14))
			for i := range loops {
				a := actions[rng.IntN(len(actions))]
				tally := tallies[a.name]
				t.Run(fmt.Sprintf("%d-%s", i, a.name), func(t *testing.T) {
					f, env := matrixFixture(t, a, "sqlite")
					before := liveLocks(t, f)
					// Within 1.5 times the apply's measured time: some land after it ended.
					delay := time.Duration(rng.Int64N(int64(durations[a.name]) * 3 / 2))
					killed := killAfter(t, f.child("killable", env...), delay)
					tally.runs++
					if killed {
						tally.randomKills++
					}
					checkAfterKill(t, f, a, before, tally)
				})
			}
		})
	}
	var names []string
	for n := range tallies {
		names = append(names, n)
	}
	sort.Strings(names)
	total := 0
	for _, n := range names {
		x := tallies[n]
		total += x.kills + x.randomKills
		t.Logf("%-38s kills at steps %3d, random %3d of %3d runs  states %v  verify: failed %d, succeeded %d, unknown %d; partial states finished %d",
			n, x.kills, x.randomKills, x.runs, x.states, x.failed, x.succeeded, x.unknown, x.finish)
	}
	t.Logf("crash matrix (%s): %d kills in %s", map[bool]string{true: "long", false: "short"}[long], total, time.Since(start).Round(time.Second))
}

// killAfter starts cmd (a "killable" child), lets it apply once it is ready, and kills it
// after delay unless it finished first; it reports whether it was killed.
func killAfter(t *testing.T, cmd *exec.Cmd, delay time.Duration) bool {
	t.Helper()
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(out)
	if line, err := r.ReadString('\n'); err != nil || line != "ready\n" {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("child not ready: %q %v", line, err)
	}
	done := make(chan struct{})
	go func() { _, _ = io.Copy(io.Discard, r); close(done) }()
	in.Close()
	timer := time.NewTimer(delay) // the kill's moment is the point of the test, not a wait
	defer timer.Stop()
	select {
	case <-done:
	case <-timer.C:
		_ = cmd.Process.Signal(syscall.SIGKILL)
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	return errors.As(err, &ee) && ee.Sys().(syscall.WaitStatus).Signal() == syscall.SIGKILL
}
