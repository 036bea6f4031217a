package govern

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"steward/govern/actionid"
	"steward/leases"
	"steward/leases/leaserec"
	"steward/leases/leasestest"
	"steward/leases/seedtest"
	"steward/locks"
)

// TestRetireKeepsAWorkerInPlaceRewrite (through the core): a worker
// rewrites its expired lock in place while lock.retire archives it. The retire refuses
// fence_moved, the live file holds the worker's write and retired/ holds no stale archive.
func TestRetireKeepsAWorkerInPlaceRewrite(t *testing.T) {
	f := newFixture(t, RoleOperator)
	name := f.lockFile(4, -time.Minute, deadPID(t))
	path := filepath.Join(f.ws.LocksDir, name)
	orig := mustRead(t, path)
	next := bytes.Replace(orig, []byte(`"heartbeat_count": 1`), []byte(`"heartbeat_count": 2`), 1)
	if bytes.Equal(next, orig) {
		t.Fatal("fixture lock has no heartbeat_count 1")
	}
	wfd, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer wfd.Close()
	core := New(f.ws, f.audit, Options{Actor: f.core.actor, Now: f.clock.Now, Step: func(s string) {
		if s == "lock-"+locks.StepDirSynced {
			_ = wfd.Truncate(0)
			_, _ = wfd.WriteAt(next, 0)
		}
	}})
	defer core.Close()
	_, out, err := core.Run(context.Background(), Request{Action: actionid.RetireLock, Target: Target{LockFile: name}}, "retire acme/widgets#4")
	if err != nil || out.Result != ResultRefused || out.Code != CodeFenceMoved {
		t.Fatalf("retire during an in-place rewrite: %+v %v; want refused fence_moved", out, err)
	}
	if got := mustRead(t, path); !bytes.Equal(got, next) {
		t.Fatalf("live lock after the refused retire:\n%s", got)
	}
	snap, err := locks.LoadDir(f.ws.LocksDir, locks.LoadOptions{Retired: true})
	if err != nil || len(snap.Live) != 1 || len(snap.Retired) != 0 {
		t.Fatalf("locks after the refusal: %v, %d live, %d archived", err, len(snap.Live), len(snap.Retired))
	}
}

// activeLeases returns the non-terminal leases on item n.
func (f *fixture) activeLeases(n int64) []leaserec.Lease {
	f.t.Helper()
	r, err := leases.OpenReader(f.ws.DBTarget())
	if err != nil {
		f.t.Fatal(err)
	}
	defer r.Close()
	ls, err := r.LeasesForWorkItem(context.Background(), work(n))
	if err != nil {
		f.t.Fatal(err)
	}
	return ls
}

// TestClaimCompensatesAFailedLockWrite: when writing the lock fails
// after the lease was inserted (here the flock path is occupied by a directory), the claim
// releases its lease again within the same attempt and records failed naming both effects.
// Before the fix the lease stayed active without a lock, the attempt was unknown although
// steward knew what happened, and a retry was refused already_held.
func TestClaimCompensatesAFailedLockWrite(t *testing.T) {
	f := newFixture(t, RoleOperator)
	name, _ := locks.Name(lockKey(work(7)))
	block := filepath.Join(f.ws.LocksDir, "."+name+".flock")
	if err := os.Mkdir(block, 0o700); err != nil {
		t.Fatal(err)
	}
	req := Request{Action: actionid.Claim, Target: Target{Item: item(7), Session: "s1"}, Params: ClaimParams{PID: strconv.Itoa(os.Getpid())}}
	_, out, err := f.core.Run(context.Background(), req, "")
	if err != nil || out.Result != ResultFailed || out.Disposition != dispositionCompensated {
		t.Fatalf("claim with an unwritable lock: %+v %v; want failed/compensated", out, err)
	}
	eff := strings.Join(out.Effects, "\n")
	if !strings.Contains(eff, "created") || !strings.Contains(eff, "released again") {
		t.Errorf("effects %q: want the lease created and released again", out.Effects)
	}
	if ls := f.activeLeases(7); len(ls) != 0 {
		t.Fatalf("%d active leases after the failed claim; want none", len(ls))
	}
	a := Attempts(f.records())
	if len(a) != 1 || a[0].Outcomes != 1 || a[0].Outcome.Result != ResultFailed || len(a[0].Outcome.Effects) == 0 {
		t.Fatalf("audit: %+v", a)
	}
	// With the obstacle gone, the same worker's retry claims the item.
	if err := os.Remove(block); err != nil {
		t.Fatal(err)
	}
	if _, out, err := f.core.Run(context.Background(), req, ""); err != nil || out.Result != ResultSucceeded {
		t.Fatalf("retry: %+v %v", out, err)
	}
}

// TestHeartbeatRefusesALocklessLease: a lease whose lock is missing
// is not renewed — before the fix heartbeat renewed it indefinitely, a claim the lock
// directory never showed.
func TestHeartbeatRefusesALocklessLease(t *testing.T) {
	f := newFixture(t, RoleOperator)
	out := f.claim("s1", 7)
	if err := os.Remove(filepath.Join(f.ws.LocksDir, out.Detail["lock_file"])); err != nil {
		t.Fatal(err)
	}
	f.clock.Add(time.Minute)
	_, hb, err := f.core.Run(context.Background(), Request{Action: actionid.Heartbeat, Target: Target{LeaseID: out.Detail["lease_id"], Session: "s1"}}, "")
	if err != nil || hb.Result != ResultRefused || hb.Code != CodeLockMissing {
		t.Fatalf("heartbeat of a lockless lease: %+v %v; want refused %s", hb, err, CodeLockMissing)
	}
	if l := f.lease(out.Detail["lease_id"]); l.ExpiresAt.Raw != out.Detail["expires_at"] || l.HeartbeatCount != 0 {
		t.Fatalf("the lockless lease was renewed: until %s, %d heartbeats", l.ExpiresAt.Raw, l.HeartbeatCount)
	}
	// Release still works: the worker gives the lease back and claims again.
	if _, rel, err := f.core.Run(context.Background(), Request{Action: actionid.Release, Target: Target{LeaseID: out.Detail["lease_id"], Session: "s1"}}, ""); err != nil || rel.Result != ResultSucceeded {
		t.Fatalf("release of the lockless lease: %+v %v", rel, err)
	}
	f.claim("s1", 7)
}

// crashChild runs the core in a child process and kills it at step; it fails the test if
// the child was not killed there.
func (f *fixture) crashChild(step string, env ...string) {
	f.t.Helper()
	err := f.child("crash", append(env, "CHILD_STEP="+step)...).Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		f.t.Fatalf("child was not killed at %s: %v", step, err)
	}
}

// verifyOne runs Verify and returns its one verification (failing the test otherwise).
func (f *fixture) verifyOne() Verification {
	f.t.Helper()
	vs, err := f.core.Verify(context.Background())
	if err != nil || len(vs) != 1 {
		f.t.Fatalf("verify: %v %+v", err, vs)
	}
	return vs[0]
}

// TestVerifyClaimThatEndedSince: a claim killed after its lease and
// lock were written, then released normally by its worker. Before the fix audit verify
// settled it failed — "no active lease carries this attempt's mark" — because it looked
// only at active leases; the lease and lock had been there.
func TestVerifyClaimThatEndedSince(t *testing.T) {
	f := newFixture(t, RoleOperator)
	f.crashChild("lock-"+locks.StepDirSynced, "CHILD_ACTION="+actionid.Claim, "CHILD_ITEM=7")
	ls := f.activeLeases(7)
	if len(ls) != 1 {
		t.Fatalf("%d active leases after the killed claim", len(ls))
	}
	_, rel, err := f.core.Run(context.Background(), Request{Action: actionid.Release, Target: Target{LeaseID: ls[0].LeaseID, Session: "s-child"}}, "")
	if err != nil || rel.Result != ResultSucceeded {
		t.Fatalf("release: %+v %v", rel, err)
	}
	v := f.verifyOne()
	if v.Action != actionid.Claim || v.Result != ResultSucceeded {
		t.Fatalf("verify of the released claim: %s %v; want succeeded", v.Result, v.Evidence)
	}
}

// TestVerifyHeartbeatAndUndo: heartbeat and undo attempts left
// unknown were never settled ("a heartbeat is superseded by the next one", "inspect the
// target and resolve by hand"). Each now has a verifier: killed before its commit it is
// failed, killed after its last write it is succeeded; a heartbeat killed between the lease
// and the lock stays unknown (heartbeat again).
func TestVerifyHeartbeatAndUndo(t *testing.T) {
	cases := []struct {
		name, action, step string
		setup              func(f *fixture) []string
		want               Result
	}{
		{"heartbeat/before-commit", actionid.Heartbeat, "before-commit", heartbeatSetup, ResultFailed},
		{"heartbeat/lock-dir-synced", actionid.Heartbeat, "lock-" + locks.StepDirSynced, heartbeatSetup, ResultSucceeded},
		{"heartbeat/lock-locked", actionid.Heartbeat, "lock-" + locks.StepLocked, heartbeatSetup, ResultUnknown},
		{"undo-retire/intent-written", actionid.Undo, "intent-written", undoSetup, ResultFailed},
		{"undo-retire/lock-dir-synced", actionid.Undo, "lock-" + locks.StepDirSynced, undoSetup, ResultSucceeded},
		{"release/before-commit", actionid.Release, "before-commit", heartbeatSetup, ResultFailed},
		{"release/lock-live-removed", actionid.Release, "lock-" + locks.StepLiveRemoved, heartbeatSetup, ResultSucceeded},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, RoleOperator)
			env := append(tc.setup(f), "CHILD_ACTION="+tc.action)
			f.crashChild(tc.step, env...)
			v := f.verifyOne()
			if v.Result != tc.want {
				t.Fatalf("verify after a kill at %s: %s %v; want %s", tc.step, v.Result, v.Evidence, tc.want)
			}
			a := Attempts(f.records())
			last := a[len(a)-1]
			if last.Outcomes != 1 || (tc.want != ResultUnknown && (len(last.Resolutions) != 1 || last.Status() != tc.want)) {
				t.Fatalf("audit of the killed attempt: %+v", last)
			}
		})
	}
}

// heartbeatSetup claims item 7 for session s-child and moves the clock a minute on.
func heartbeatSetup(f *fixture) []string {
	out := f.claim("s-child", 7)
	f.clock.Add(time.Minute)
	return []string{"CHILD_LEASE=" + out.Detail["lease_id"], "CHILD_SESSION=s-child"}
}

// undoSetup retires an expired lock of a dead owner and names that attempt for undo.
func undoSetup(f *fixture) []string {
	name := f.lockFile(4, -time.Minute, deadPID(f.t))
	_, out, err := f.core.Run(context.Background(), Request{Action: actionid.RetireLock, Target: Target{LockFile: name}}, "retire acme/widgets#4")
	if err != nil || out.Result != ResultSucceeded {
		f.t.Fatalf("retire: %+v %v", out, err)
	}
	return []string{"CHILD_ATTEMPT=" + out.Attempt}
}

// TestVerifyOnASeedShapedDBNeverReadsAbsenceAsProof: the supervised system's own DB has no
// events.detail_json, so no event can name an attempt. An interrupted heartbeat there, or a
// release of a lease that has ended since, stays unknown — the absence of a mark proves
// nothing — instead of being settled failed. A release whose lease is still active is
// failed: that the lease is active proves it.
func TestVerifyOnASeedShapedDBNeverReadsAbsenceAsProof(t *testing.T) {
	f := newFixture(t, RoleOperator)
	seed := seedtest.New(t, seedtest.Options{})
	f.ws.DBPath = seed.Path
	f.core = f.newCore(RoleOperator, false)
	out := f.claim("s1", 7)
	lease := out.Detail["lease_id"]
	interrupted := func(action string) {
		intent := Record{Attempt: NewAttemptID(f.clock.Now()), Kind: KindIntent, Action: action, At: stamp(f.clock.Now()),
			Target: Target{LeaseID: lease, Session: "s1"}, Actor: f.core.actor}
		if err := f.audit.Append(intent); err != nil {
			t.Fatal(err)
		}
	}
	interrupted(actionid.Heartbeat)
	interrupted(actionid.Release)
	want := map[string]Result{actionid.Heartbeat: ResultUnknown, actionid.Release: ResultFailed}
	vs, err := f.core.Verify(context.Background())
	if err != nil || len(vs) != 2 {
		t.Fatalf("verify: %v %+v", err, vs)
	}
	for _, v := range vs {
		if v.Result != want[v.Action] {
			t.Errorf("%s: %s %v; want %s", v.Action, v.Result, v.Evidence, want[v.Action])
		}
	}
	if _, rel, err := f.core.Run(context.Background(), Request{Action: actionid.Release, Target: Target{LeaseID: lease, Session: "s1"}}, ""); err != nil || rel.Result != ResultSucceeded {
		t.Fatalf("release: %+v %v", rel, err)
	}
	interrupted(actionid.Release)
	vs, err = f.core.Verify(context.Background())
	if err != nil || len(vs) != 2 { // the heartbeat stays unknown, and the new release
		t.Fatalf("verify: %v %+v", err, vs)
	}
	for _, v := range vs {
		if v.Result != ResultUnknown {
			t.Errorf("%s after the lease ended, on a DB whose events carry no mark: %s %v; want unknown", v.Action, v.Result, v.Evidence)
		}
	}
}

// seedLock writes a canonical lock for item n the way another tool might: naming no lease,
// owned by session (may be ""), with the given pid and expiry, under name ("" = steward's).
func (f *fixture) seedLock(name string, n int64, session string, pid int64, exp time.Duration) string {
	f.t.Helper()
	it := *item(n)
	l := &leaserec.Lease{CreatedAt: leaserec.ParseTimestamp(ts(-30 * time.Minute)), ExpiresAt: leaserec.ParseTimestamp(ts(exp))}
	rec := canonicalLock(it, "feat/issue-"+strconv.FormatInt(n, 10), filepath.Join(f.ws.RepoRoot, "branches", "x"), "bot", "author", session, "tsk-"+strconv.FormatInt(n, 10), pid, f.host(), l)
	if name == "" {
		name, _ = locks.Name(lockKey(work(n)))
	}
	f.writeLock(name, rec)
	return name
}

// TestRetireFollowsTheModelsJoin: a lock that names no lease, whose
// recorded pid is dead (the tool that wrote it exited), while the DB holds an active,
// unexpired lease of the item whose owner is alive. The live model joins them by session
// and shows the claim active; before the fix the core followed only the lock's lease_id,
// allowed lock.retire and the retire succeeded, leaving the running worker without a lock.
func TestRetireFollowsTheModelsJoin(t *testing.T) {
	cases := []struct {
		name, lockSession string
		leaseExp          time.Duration
		leasePID          func(t *testing.T) int64
		want              string // refusal code, "" when the retire is allowed
	}{
		{"joined by session, lease live", "s-L1", 5 * time.Minute, selfPID, codeFreshForeignLease},
		{"anonymous lock, lease live", "", 5 * time.Minute, selfPID, codeFreshForeignLease},
		{"joined by session, lease past expiry, owner alive", "s-L1", -time.Minute, selfPID, codeInspectOnly},
		{"joined by session, lease past expiry, owner dead", "s-L1", -time.Minute, deadPID, ""},
		{"another session's dead lock", "s-gone", 5 * time.Minute, selfPID, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, RoleOperator)
			f.insert(leasestest.Lease{LeaseID: "L1", SessionID: "s-L1", Role: "author", TaskClass: "author_issue_work",
				Work: work(4), CreatedAt: ts(-20 * time.Minute), ExpiresAt: ts(tc.leaseExp), LastHeartbeatAt: ts(-time.Minute),
				OwnerPID: tc.leasePID(t), OwnerHost: f.host()})
			name := f.seedLock("", 4, tc.lockSession, deadPID(t), 5*time.Minute)
			req := Request{Action: actionid.RetireLock, Target: Target{LockFile: name}}
			before := f.state()
			pv, err := f.core.Preview(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if f.state() != before {
				t.Fatal("the preview wrote")
			}
			out := f.core.Apply(context.Background(), pv, "retire acme/widgets#4")
			if tc.want == "" {
				if !pv.Allowed || out.Result != ResultSucceeded {
					t.Fatalf("retire: preview %+v, apply %+v; want allowed", pv.Refusal, out)
				}
				return
			}
			if pv.Allowed || pv.Refusal.Code != tc.want || out.Result != ResultRefused || out.Code != tc.want {
				t.Fatalf("retire of a lock the model joins to a live claim: preview %+v, apply %s %s; want refused %s\nevidence %v", pv.Refusal, out.Result, out.Code, tc.want, pv.Evidence)
			}
			if e := locks.ReadFile(f.ws.LocksDir, name); e.Missing {
				t.Fatal("the live lock is gone after a refused retire")
			}
		})
	}
}

func selfPID(*testing.T) int64 { return int64(os.Getpid()) }

// TestClaimSeesEveryLiveLockOfTheItem: (a) a live canonical lock of
// the item under another file name (the contract allows any) and (b) the item spelled
// ACME/Widgets where acme/widgets is held. Before the fix the claim probed only steward's
// own file name and keyed the item case-sensitively: it granted a second owner. Now the
// preview and the apply refuse, and nothing is written.
func TestClaimSeesEveryLiveLockOfTheItem(t *testing.T) {
	claimOf := func(org, repo, session string) Request {
		return Request{Action: actionid.Claim, Target: Target{Item: &Item{Remote: "origin", Org: org, Repo: repo, Kind: "issue", Number: 7}, Session: session},
			Params: ClaimParams{PID: strconv.Itoa(os.Getpid())}}
	}
	cases := []struct {
		name  string
		setup func(f *fixture)
		req   Request
	}{
		{"a live lock under another name", func(f *fixture) {
			f.seedLock("worker-own-name.json", 7, "s-worker", int64(os.Getpid()), 5*time.Minute)
		}, claimOf("acme", "widgets", "s2")},
		{"the item in another case", func(f *fixture) { f.claim("s1", 7) }, claimOf("ACME", "Widgets", "s2")},
		{"a lock in another case under another name", func(f *fixture) {
			f.seedLock("x.json", 7, "s-worker", int64(os.Getpid()), 5*time.Minute)
		}, claimOf("Acme", "WIDGETS", "s2")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, RoleOperator)
			tc.setup(f)
			leasesBefore := len(f.activeLeases(7))
			pv, err := f.core.Preview(context.Background(), tc.req)
			if err != nil || pv.Allowed || pv.Refusal.Code != CodeClaimedByOther {
				t.Fatalf("preview: %+v %v; want refused %s", pv.Refusal, err, CodeClaimedByOther)
			}
			out := f.core.Apply(context.Background(), pv, "")
			if out.Result != ResultRefused || out.Code != CodeClaimedByOther {
				t.Fatalf("apply: %+v", out)
			}
			snap, err := locks.LoadDir(f.ws.LocksDir, locks.LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if n := len(f.activeLeases(7)); n != leasesBefore || len(snap.Live) != 1 {
				t.Fatalf("after a refused claim: %d active leases (was %d), %d live locks; want no new owner", n, leasesBefore, len(snap.Live))
			}
		})
	}
}

// TestHeartbeatFollowsALockJoinedBySession: a lock another tool wrote for the lease's
// session, naming no lease and under another file name, is the lease's lock (the model's
// join): heartbeat renews it instead of refusing lock_missing.
func TestHeartbeatFollowsALockJoinedBySession(t *testing.T) {
	f := newFixture(t, RoleOperator)
	f.liveLease("L1", 7, int64(os.Getpid()), f.host())
	name := f.seedLock("their-name.json", 7, "s-L1", int64(os.Getpid()), 2*time.Minute)
	f.clock.Add(time.Minute)
	_, out, err := f.core.Run(context.Background(), Request{Action: actionid.Heartbeat, Target: Target{LeaseID: "L1", Session: "s-L1"}}, "")
	if err != nil || out.Result != ResultSucceeded {
		t.Fatalf("heartbeat: %+v %v", out, err)
	}
	e := locks.ReadFile(f.ws.LocksDir, name)
	if l := f.lease("L1"); e.Record.WorkLease == nil || !e.Record.WorkLease.ExpiresAt.Valid || !e.Record.WorkLease.ExpiresAt.Time.Equal(l.ExpiresAt.Time) {
		t.Fatalf("the joined lock did not follow the lease: %+v vs %s", e.Record.WorkLease, l.ExpiresAt.Raw)
	}
}
