package govern

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"steward/govern/actionid"
	"steward/leases/leaserec"
	"steward/leases/leasestest"
	"steward/locks"
)

// deadClaim is a claim on item n made through the core by a worker whose process is dead,
// its lease past its expiry: what a dead worker leaves behind (a lease and a lock).
func (f *fixture) deadClaim(n int64) Outcome {
	f.t.Helper()
	_, out, err := f.newCore(RoleOperator, false).Run(context.Background(), Request{Action: actionid.Claim, Target: Target{Item: item(n), Session: "s-dead"},
		Params: ClaimParams{PID: strconv.FormatInt(deadPID(f.t), 10), Role: "author", Username: "bot-dead", TTL: "1m"}}, "")
	if err != nil || out.Result != ResultSucceeded {
		f.t.Fatalf("claim #%d: %+v %v", n, out, err)
	}
	f.clock.Add(3 * time.Minute)
	return out
}

// pointLock makes lock name name lease id of session (as its owner would have written it).
func (f *fixture) pointLock(name, id, session string) {
	f.t.Helper()
	e := locks.ReadFile(f.ws.LocksDir, name)
	rec := e.Record
	rec.LeaseID, rec.OwnerSession = id, session
	if _, err := locks.WriteCAS(f.ws.LocksDir, name, locks.FenceOf(&e.Record), rec); err != nil {
		f.t.Fatal(err)
	}
}

// checkRecovered: the item's lease ended with status, its lock is archived, and the attempt
// left one step record per step, each succeeded, between its intent and its outcome.
func checkRecovered(t *testing.T, f *fixture, out Outcome, n int64, status leaserec.Status) {
	t.Helper()
	name, _ := locks.Name(lockKey(work(n)))
	if e := locks.ReadFile(f.ws.LocksDir, name); !e.Missing {
		t.Errorf("the lock %s is still live", name)
	}
	rd, err := f.core.reader()
	if err != nil {
		t.Fatal(err)
	}
	if ls, _ := rd.LeasesForWorkItem(context.Background(), work(n)); len(ls) != 0 {
		t.Errorf("%d lease(s) still active", len(ls))
	}
	hist, _ := rd.LeaseHistory(context.Background(), work(n))
	if len(hist) == 0 || hist[len(hist)-1].Status != status {
		t.Errorf("lease history %+v, want the last %s", hist, status)
	}
	recs := f.records()
	var att Attempt
	for _, a := range Attempts(recs) {
		if a.ID == out.Attempt {
			att = a
		}
	}
	if att.Intent == nil || len(att.Intent.Steps) != 2 || len(att.Steps) != 2 {
		t.Fatalf("attempt %s: intent steps %v, step records %d; want 2 and 2", out.Attempt, att.Intent, len(att.Steps))
	}
	for i, s := range att.Steps {
		if s.Result != ResultSucceeded || s.Action != att.Intent.Steps[i].Action {
			t.Errorf("step record %d: %s %s, want %s succeeded", i, s.Action, s.Result, att.Intent.Steps[i].Action)
		}
	}
	if att.Steps[1].Action != actionid.RetireLock {
		t.Errorf("the lock is retired last, after the lease step: %s", att.Steps[1].Action)
	}
}

// TestRecoverPartialFailure: when a later step of the plan is refused after an earlier one
// took effect — the lock's owner rewrote it between the steps — the outcome is failed with
// disposition partial, its effects name exactly the step done, its message the step that
// stopped and why, and the lock is left as its owner wrote it.
func TestRecoverPartialFailure(t *testing.T) {
	f := newFixture(t, RoleOperator)
	f.deadClaim(21)
	name, _ := locks.Name(lockKey(work(21)))
	c := New(f.ws, f.audit, Options{Actor: f.core.actor, Now: f.clock.Now, Step: func(step string) {
		if step == "recover-step-2" {
			e := locks.ReadFile(f.ws.LocksDir, name)
			rec := e.Record
			if _, err := locks.WriteCAS(f.ws.LocksDir, name, locks.FenceOf(&e.Record), rec); err != nil {
				t.Fatal(err)
			}
		}
	}})
	defer c.Close()
	pv, err := c.Preview(context.Background(), Request{Action: actionid.Recover, Target: Target{Item: item(21)}})
	if err != nil || !pv.Allowed {
		t.Fatalf("preview: %+v %v", pv.Refusal, err)
	}
	out := c.Apply(context.Background(), pv, pv.ConfirmPhrase)
	if out.Result != ResultFailed || out.Disposition != DispositionPartial {
		t.Fatalf("outcome %+v, want failed partial", out)
	}
	if len(out.Effects) == 0 || !strings.Contains(out.Effects[0], "step 1 ("+actionid.ReclaimExpired+" on lease") {
		t.Errorf("effects %v: want the reclaim step named as done", out.Effects)
	}
	if !strings.Contains(out.Message, "step 2 of 2 ("+actionid.RetireLock) || !strings.Contains(out.Message, CodeFenceMoved) {
		t.Errorf("message %q: want step 2's retire refused fence_moved", out.Message)
	}
	if strings.Contains(out.Message, "after it did not run") {
		t.Errorf("message %q: the last step stopped, so no step after it is left to name", out.Message)
	}
	if e := locks.ReadFile(f.ws.LocksDir, name); e.Missing {
		t.Error("the lock its owner rewrote was retired anyway")
	}
	assertOneTerminal(t, f, out.Attempt)
	var steps []Record
	for _, r := range f.records() {
		if r.Attempt == out.Attempt && r.Kind == kindStep {
			steps = append(steps, r)
		}
	}
	if len(steps) != 2 || steps[0].Result != ResultSucceeded || steps[1].Result != ResultRefused || steps[1].Code != CodeFenceMoved {
		t.Fatalf("step records %+v: want reclaim succeeded, retire refused fence_moved", steps)
	}
}

// TestRecoverPreviewNamesEverything: the preview lists both steps with their effects,
// fences and evidence (the owner's liveness among it) and what remains afterwards, asks for
// the typed phrase, and writes nothing.
func TestRecoverPreviewNamesEverything(t *testing.T) {
	f := newFixture(t, RoleOperator)
	f.deadClaim(31)
	before := f.state()
	pv, err := f.core.Preview(context.Background(), Request{Action: actionid.Recover, Target: Target{Item: item(31)}})
	if err != nil || !pv.Allowed {
		t.Fatalf("preview: %+v %v", pv.Refusal, err)
	}
	if f.state() != before {
		t.Fatal("the preview wrote something")
	}
	all := strings.Join(append(append(pv.Effects, pv.Fences...), pv.Evidence...), "\n")
	for _, want := range []string{"step 1 of 2, " + actionid.ReclaimExpired, "step 2 of 2, " + actionid.RetireLock, "dead",
		"no active lease and no live lock file", "step 1: lease", "step 2: lock_generation"} {
		if !strings.Contains(all, want) {
			t.Errorf("the preview does not say %q:\n%s", want, all)
		}
	}
	if pv.ConfirmPhrase != "recover acme/widgets#31" || pv.Spec.Tier != TierDestructive {
		t.Errorf("phrase %q tier %s", pv.ConfirmPhrase, pv.Spec.Tier)
	}
}

// TestReclaimPreviewSaysWhatRemains: a reclaim's preview names the owner's liveness (alive:
// the worker is still running) and that the item's lock file stays.
func TestReclaimPreviewSaysWhatRemains(t *testing.T) {
	f := newFixture(t, RoleOperator)
	out := f.claim("s1", 41)
	f.clock.Add(15 * time.Minute)
	pv, err := f.core.Preview(context.Background(), Request{Action: actionid.ReclaimExpired, Target: Target{LeaseID: out.Detail["lease_id"]}})
	if err != nil || !pv.Allowed {
		t.Fatalf("preview: %+v %v", pv.Refusal, err)
	}
	name, _ := locks.Name(lockKey(work(41)))
	all := strings.Join(append(pv.Effects, pv.Evidence...), "\n")
	for _, want := range []string{"owner pid " + strconv.Itoa(os.Getpid()), "alive — the worker is still running", "remains: lock file " + name} {
		if !strings.Contains(all, want) {
			t.Errorf("the reclaim preview does not say %q:\n%s", want, all)
		}
	}
}

// TestVerifyRecover: an unknown recover (interrupted after both steps) is settled from each
// step's own evidence; one interrupted before any step is settled failed.
func TestVerifyRecover(t *testing.T) {
	f := newFixture(t, RoleOperator)
	f.deadClaim(51)
	pv, _ := f.core.Preview(context.Background(), Request{Action: actionid.Recover, Target: Target{Item: item(51)}})
	out := f.core.Apply(context.Background(), pv, pv.ConfirmPhrase)
	if out.Result != ResultSucceeded {
		t.Fatalf("recover: %+v", out)
	}
	var intent Record
	for _, r := range f.records() {
		if r.Attempt == out.Attempt && r.Kind == KindIntent {
			intent = r
		}
	}
	res, ev, ok := recoverItem{}.verify(context.Background(), f.core, intent)
	if !ok || res != ResultSucceeded {
		t.Fatalf("verify after both steps: %s %v %v", res, ev, ok)
	}
	// Its evidence names each step by its place in the plan, counted from 1.
	for _, want := range []string{"step 1 (" + actionid.ReclaimExpired + " on ", "step 2 (" + actionid.RetireLock + " on "} {
		if !strings.Contains(strings.Join(ev, "\n"), want) {
			t.Errorf("verify's evidence %q does not name %q", ev, want)
		}
	}
	other := intent
	other.Attempt = "att-never-ran"
	res, ev, ok = recoverItem{}.verify(context.Background(), f.core, other)
	if !ok || res != ResultFailed {
		t.Fatalf("verify of an attempt that did nothing: %s %v %v", res, ev, ok)
	}
}

// stepRecords are the step records of attempt, in order.
func stepRecords(f *fixture, attempt string) []Record {
	var steps []Record
	for _, r := range f.records() {
		if r.Attempt == attempt && r.Kind == kindStep {
			steps = append(steps, r)
		}
	}
	return steps
}

// sameBytesAgain rewrites the lock file name with the bytes it holds, as its owner would by
// a temp file and a rename: the content, lock_generation and task_session_id stay, the
// inode moves.
func (f *fixture) sameBytesAgain(t *testing.T, name string) {
	t.Helper()
	path := filepath.Join(f.ws.LocksDir, name)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(f.ws.LocksDir, ".owner-tmp")
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// TestRecoverPlansEachLaterStepAgain: after step 1 ended the dead worker's lease, the retire
// of the lock is planned again on what the first step left, and refused — the lock kept —
// when its guard or its fence no longer holds: a worker claimed the item in the DB meanwhile
// (the lock names neither a lease nor a session, so that live lease may be its), or the
// lock's owner rewrote it. The outcome is a partial failure naming the step done and the
// step refused, with its code.
func TestRecoverPlansEachLaterStepAgain(t *testing.T) {
	cases := []struct {
		name  string
		after func(t *testing.T, f *fixture, lock string) // run once, after step 1 committed
		code  string
	}{
		{"a worker claimed the item", func(t *testing.T, f *fixture, _ string) {
			f.liveLease("L-new", 61, int64(os.Getpid()), f.host())
		}, codeFreshForeignLease},
		{"the owner rewrote the lock", func(t *testing.T, f *fixture, lock string) {
			f.sameBytesAgain(t, lock)
		}, CodeFenceMoved},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, RoleOperator)
			claim := f.deadClaim(61)
			lock, _ := locks.Name(lockKey(work(61)))
			f.pointLock(lock, "", "")
			moved := false
			c := New(f.ws, f.audit, Options{Actor: f.core.actor, Now: f.clock.Now, Step: func(step string) {
				if step == "db-committed" && !moved {
					moved = true
					tc.after(t, f, lock)
				}
			}})
			defer c.Close()
			pv, err := c.Preview(context.Background(), Request{Action: actionid.Recover, Target: Target{Item: item(61)}})
			if err != nil || !pv.Allowed || len(pv.plan.steps) != 2 {
				t.Fatalf("preview: %+v %v, steps %v", pv.Refusal, err, pv.plan)
			}
			out := c.Apply(context.Background(), pv, pv.ConfirmPhrase)
			if out.Result != ResultFailed || out.Disposition != DispositionPartial {
				t.Fatalf("outcome %+v, want failed partial", out)
			}
			if e := locks.ReadFile(f.ws.LocksDir, lock); e.Missing {
				t.Errorf("the lock was retired although its retire was refused")
			}
			done := "Done before it: step 1 (" + actionid.ReclaimExpired + " on lease " + claim.Detail["lease_id"] + "): "
			stop := "step 2 of 2 (" + actionid.RetireLock + " on lock " + lock + ") refused " + tc.code
			if !strings.HasPrefix(out.Message, stop) || !strings.Contains(out.Message, done) {
				t.Errorf("message %q: want it to start %q and to say %q", out.Message, stop, done)
			}
			steps := stepRecords(f, out.Attempt)
			if len(steps) != 2 || steps[0].Result != ResultSucceeded || steps[1].Result != ResultRefused ||
				steps[1].Code != tc.code {
				t.Fatalf("step records %+v: want the reclaim succeeded, the retire refused %s", steps, tc.code)
			}
		})
	}
}

// TestRecoverEndsEveryLeaseOfTheItem: an item the DB holds as two work items whose org and
// repo differ in case only (one item to the supervised system, which folds them) has two
// active expired leases of dead workers; the recover plans a reclaim of each, then the
// retire, and runs all three: the second reclaim is planned again as a reclaim.
func TestRecoverEndsEveryLeaseOfTheItem(t *testing.T) {
	f := newFixture(t, RoleOperator)
	other := work(62)
	other.Org, other.Repo = "Acme", "Widgets"
	for i, w := range []leaserec.WorkRef{work(62), other} {
		id := "L" + strconv.Itoa(i+1)
		f.insert(leasestest.Lease{LeaseID: id, SessionID: "s-" + id, Role: "author", TaskClass: "author_issue_work",
			Work: w, CreatedAt: ts(-20 * time.Minute), ExpiresAt: ts(-5 * time.Minute), LastHeartbeatAt: ts(-15 * time.Minute),
			OwnerPID: deadPID(t), OwnerHost: f.host()})
	}
	lock := f.seedLock("", 62, "", deadPID(t), -time.Minute)
	pv, err := f.core.Preview(context.Background(), Request{Action: actionid.Recover, Target: Target{Item: item(62)}})
	if err != nil || !pv.Allowed {
		t.Fatalf("preview: %+v %v", pv.Refusal, err)
	}
	out := f.core.Apply(context.Background(), pv, pv.ConfirmPhrase)
	if out.Result != ResultSucceeded {
		t.Fatalf("outcome %+v, want succeeded", out)
	}
	want := []Request{{Action: actionid.ReclaimExpired, Target: Target{LeaseID: "L1"}},
		{Action: actionid.ReclaimExpired, Target: Target{LeaseID: "L2"}},
		{Action: actionid.RetireLock, Target: Target{LockFile: lock}}}
	steps := stepRecords(f, out.Attempt)
	if len(steps) != len(want) {
		t.Fatalf("step records %+v, want %d", steps, len(want))
	}
	for i, s := range steps {
		if s.Action != want[i].Action || s.Target != want[i].Target || s.Result != ResultSucceeded {
			t.Errorf("step %d: %s on %+v %s, want %s on %+v succeeded", i+1, s.Action, s.Target, s.Result,
				want[i].Action, want[i].Target)
		}
	}
	for _, id := range []string{"L1", "L2"} {
		if l := f.lease(id); l.Status != leaserec.StatusExpired {
			t.Errorf("lease %s is %s, want expired", id, l.Status)
		}
	}
	if e := locks.ReadFile(f.ws.LocksDir, lock); !e.Missing {
		t.Error("the lock is still live")
	}
}

// TestRecoverRunsItsFirstStepAsTheActionAlone: the first step of a recover runs on the plan
// Apply re-checked, fenced by its own compare-and-swap as the action alone is. The lock's
// owner rewriting it with the same bytes after that re-check (lock_generation and
// task_session_id unchanged) stops neither lock.retire nor a recover whose first step is
// that retire: both archive it.
func TestRecoverRunsItsFirstStepAsTheActionAlone(t *testing.T) {
	for _, action := range []string{actionid.RetireLock, actionid.Recover} {
		t.Run(action, func(t *testing.T) {
			f := newFixture(t, RoleOperator)
			lock := f.seedLock("", 63, "", deadPID(t), -time.Minute)
			c := New(f.ws, f.audit, Options{Actor: f.core.actor, Now: f.clock.Now, Step: func(step string) {
				if step == "intent-written" {
					f.sameBytesAgain(t, lock)
				}
			}})
			defer c.Close()
			req := Request{Action: action, Target: Target{LockFile: lock}}
			if action == actionid.Recover {
				req.Target = Target{Item: item(63)}
			}
			pv, err := c.Preview(context.Background(), req)
			if err != nil || !pv.Allowed {
				t.Fatalf("preview: %+v %v", pv.Refusal, err)
			}
			if out := c.Apply(context.Background(), pv, pv.ConfirmPhrase); out.Result != ResultSucceeded {
				t.Fatalf("outcome %+v, want succeeded", out)
			}
			if e := locks.ReadFile(f.ws.LocksDir, lock); !e.Missing {
				t.Error("the lock is still live")
			}
		})
	}
}
