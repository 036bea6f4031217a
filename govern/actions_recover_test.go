package govern

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"steward/govern/actionid"
	"steward/leases/leaserec"
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
