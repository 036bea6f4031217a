package govern

import (
	"context"
	"steward/govern/actionid"
	"strings"
	"testing"
	"time"
)

// TestViewerRecoverPreviewShowsThePlan: a viewer's `recover --dry-run` shows every step the
// plan would take, with the refusal role_too_low — as a single action's preview does — and
// writes nothing. Before, each step was refused on the viewer's role, so the preview showed
// no step at all.
func TestViewerRecoverPreviewShowsThePlan(t *testing.T) {
	f := newFixture(t, RoleOperator)
	f.deadClaim(51)
	viewer := f.newCore(RoleViewer, false)
	before := f.state()
	pv, err := viewer.Preview(context.Background(), Request{Action: actionid.Recover, Target: Target{Item: item(51)}})
	if err != nil {
		t.Fatal(err)
	}
	if f.state() != before {
		t.Fatal("the preview wrote something")
	}
	if pv.Allowed || pv.Refusal == nil || pv.Refusal.Code != CodeRoleTooLow {
		t.Fatalf("refusal %+v, want role_too_low", pv.Refusal)
	}
	all := strings.Join(append(append(pv.Effects, pv.Fences...), pv.Evidence...), "\n")
	for _, want := range []string{"step 1 of 2, " + actionid.ReclaimExpired, "step 2 of 2, " + actionid.RetireLock, "step 1: lease", "step 2: lock_generation"} {
		if !strings.Contains(all, want) {
			t.Errorf("the viewer's preview does not show %q:\n%s", want, all)
		}
	}
	// Read-only is the plan's own refusal too, with the steps shown.
	ro := f.newCore(RoleOperator, true)
	pv, _ = ro.Preview(context.Background(), Request{Action: actionid.Recover, Target: Target{Item: item(51)}})
	if pv.Refusal == nil || pv.Refusal.Code != CodeReadOnly || !strings.Contains(strings.Join(pv.Effects, "\n"), "step 2 of 2") {
		t.Errorf("read-only preview: %+v %v", pv.Refusal, pv.Effects)
	}
}

// TestUndoWordsMatchUndo: what a preview says of undo is what `steward undo` then does. A
// retire says "undo restores it" and its undo is allowed; a recover retires the same lock but
// records no inverse, so its preview must not promise an undo — its undo is no_inverse.
// Before, recover's preview carried the retire's "undo restores it" and undo refused.
func TestUndoWordsMatchUndo(t *testing.T) {
	promises := func(effects []string) bool {
		for _, e := range effects {
			if strings.Contains(e, "undo restores") {
				return true
			}
		}
		return false
	}
	check := func(t *testing.T, f *fixture, req Request) {
		t.Helper()
		pv, err := f.core.Preview(context.Background(), req)
		if err != nil || !pv.Allowed {
			t.Fatalf("preview %s: %+v %v", req.Action, pv.Refusal, err)
		}
		out := f.core.Apply(context.Background(), pv, pv.ConfirmPhrase)
		if out.Result != ResultSucceeded {
			t.Fatalf("apply %s: %+v", req.Action, out)
		}
		upv, err := f.core.Preview(context.Background(), Request{Action: actionid.Undo, Target: Target{Attempt: out.Attempt}})
		if err != nil {
			t.Fatal(err)
		}
		undoable := upv.Refusal == nil || upv.Refusal.Code != codeNoInverse
		if promises(pv.Effects) != undoable {
			t.Errorf("%s: the preview promises undo %v, undo answers %+v\n%s", req.Action, promises(pv.Effects), upv.Refusal, strings.Join(pv.Effects, "\n"))
		}
	}
	t.Run("retire", func(t *testing.T) {
		f := newFixture(t, RoleOperator)
		check(t, f, Request{Action: actionid.RetireLock, Target: Target{LockFile: f.lockFile(4, -time.Minute, deadPID(t))}})
	})
	t.Run("recover", func(t *testing.T) {
		f := newFixture(t, RoleOperator)
		f.deadClaim(52)
		check(t, f, Request{Action: actionid.Recover, Target: Target{Item: item(52)}})
	})
}
