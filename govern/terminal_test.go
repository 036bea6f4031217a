package govern

import (
	"context"
	"errors"
	"steward/govern/actionid"
	"testing"
)

// fakeAction lets a test decide what apply does.
type fakeAction struct {
	do func() effect
}

func (fakeAction) spec() Spec {
	return Spec{ID: "test.fake", MinRole: RoleOperator, Tier: TierGatedWrite}
}
func (fakeAction) plan(context.Context, *Core, Request) (*plan, error) {
	return &plan{state: 1, effects: []string{"nothing real"}}, nil
}
func (a fakeAction) apply(context.Context, *Core, Request, *plan, string) effect { return a.do() }
func (fakeAction) verify(context.Context, *Core, Record) (Result, []string, bool) {
	return "", nil, false
}

func TestExactlyOneTerminalRecord(t *testing.T) {
	cases := []struct {
		name  string
		apply func() effect
		want  Result
		disp  Disposition
	}{
		{"panic before any effect", func() effect { panic("boom") }, ResultFailed, DispositionNotAttempted},
		{"error after sending", func() effect { return effect{sent: true, err: errors.New("connection reset")} }, ResultUnknown, DispositionOutcomeUnknown},
		{"error before sending", func() effect { return effect{err: errors.New("dial refused")} }, ResultFailed, DispositionNotAttempted},
		{"cancelled", func() effect { return effect{err: context.Canceled} }, ResultFailed, DispositionNotAttempted},
		{"refused by the source", func() effect { return effect{refusal: refuse("fence_moved", "moved; preview again")} }, ResultRefused, DispositionNotAttempted},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, RoleOperator)
			f.core.actions["test.fake"] = fakeAction{do: tc.apply}
			pv, err := f.core.Preview(context.Background(), Request{Action: "test.fake"})
			if err != nil || !pv.Allowed {
				t.Fatal(err, pv.Refusal)
			}
			var out Outcome
			func() {
				defer func() { _ = recover() }()
				out = f.core.Apply(context.Background(), pv, "")
			}()
			atts := Attempts(f.records())
			if len(atts) != 1 || atts[0].Outcomes != 1 || atts[0].Intent == nil {
				t.Fatalf("attempts %+v", atts)
			}
			if o := atts[0].Outcome; o.Result != tc.want || o.Disposition != tc.disp {
				t.Fatalf("terminal %s/%s, want %s/%s", o.Result, o.Disposition, tc.want, tc.disp)
			}
			if tc.name != "panic before any effect" && out.Result != tc.want {
				t.Fatalf("returned %s", out.Result)
			}
		})
	}
}

// A full disk (the audit log refusing writes) refuses before any effect.
func TestAuditUnavailableRefusesBeforeAnyEffect(t *testing.T) {
	f := newFixture(t, RoleOperator)
	f.expiredLease("L1", 1)
	f.audit.f = failingSink{}
	_, out, err := f.core.Run(context.Background(), Request{Action: actionid.ReclaimExpired, Target: Target{LeaseID: "L1"}}, "")
	if err != nil || out.Result != ResultRefused || out.Code != CodeAuditUnavailable || out.Disposition != DispositionNotAttempted {
		t.Fatalf("outcome %+v %v", out, err)
	}
	if l := f.lease("L1"); l.Status != "active" {
		t.Fatalf("lease changed without an audit record: %s", l.Status)
	}
}

type failingSink struct{}

func (failingSink) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }
func (failingSink) Sync() error               { return nil }
func (failingSink) Fd() uintptr               { return ^uintptr(0) }
