package govern

import (
	"context"
	"os"
	"steward/govern/actionid"
	"strings"
	"testing"
	"time"
)

func ackReq(entry, evidence, level string) Request {
	return Request{Action: actionid.AttentionAck, Target: Target{Entry: entry}, Params: AttentionParams{Evidence: evidence, Level: level}}
}

// TestAttentionAckAndSnooze: a preview writes nothing; an apply appends one mark beside the
// audit log and leaves an intent and one outcome; a second acknowledgement of the same
// evidence and level is refused and writes nothing; a new level is acknowledged again.
func TestAttentionAckAndSnooze(t *testing.T) {
	f := newFixture(t, RoleOperator)
	ctx := context.Background()
	req := ackReq("clarification:acme/widgets#7", "ev1", "0")
	before := f.state()
	pv, err := f.core.Preview(ctx, req)
	if err != nil || !pv.Allowed {
		t.Fatalf("preview: %+v %v", pv.Refusal, err)
	}
	if f.state() != before {
		t.Fatal("the preview wrote")
	}
	if !strings.Contains(strings.Join(pv.Effects, " "), "acknowledges clarification:acme/widgets#7 at level 0") {
		t.Fatalf("effects %q", pv.Effects)
	}
	out := f.core.Apply(ctx, pv, "")
	if out.Result != ResultSucceeded {
		t.Fatalf("apply: %+v", out)
	}
	ms, finds, err := ReadAttention(f.audit.Path())
	if err != nil || len(finds) > 0 || len(ms) != 1 {
		t.Fatalf("marks %+v %v %v", ms, finds, err)
	}
	if m := ms[0]; m.Attempt != out.Attempt || m.Kind != "ack" || m.Entry != req.Target.Entry || m.Evidence != "ev1" || m.Level != 0 || m.By != "maint" || !m.At.Equal(f.clock.Now()) {
		t.Fatalf("mark %+v", m)
	}
	if k := countKinds(f.records()); k[KindIntent] != 1 || k[KindOutcome] != 1 {
		t.Fatalf("audit %v", k)
	}
	if st, _ := os.Stat(AttentionPath(f.audit.Path())); st.Mode().Perm() != 0o600 {
		t.Fatalf("attention file mode %v", st.Mode())
	}

	before = f.state()
	pv, _ = f.core.Preview(ctx, req)
	if pv.Allowed || pv.Refusal.Code != CodeAlreadyAcknowledged || !strings.Contains(pv.Refusal.Message, "maint acknowledged") {
		t.Fatalf("second ack: %+v", pv.Refusal)
	}
	if f.state() != before {
		t.Fatal("a refused preview wrote")
	}
	if _, out, _ := f.core.Run(ctx, ackReq(req.Target.Entry, "ev1", "1"), ""); out.Result != ResultSucceeded {
		t.Fatalf("ack at the next level: %+v", out)
	}
	if _, out, _ := f.core.Run(ctx, ackReq(req.Target.Entry, "ev2", "0"), ""); out.Result != ResultSucceeded {
		t.Fatalf("ack of new evidence: %+v", out)
	}

	snz := Request{Action: actionid.AttentionSnooze, Target: Target{Entry: "orphan:x"}, Params: AttentionParams{Evidence: "e", For: "90m"}}
	if _, out, _ := f.core.Run(ctx, snz, ""); out.Result != ResultSucceeded || out.Detail["until"] != f.clock.Now().Add(90*time.Minute).UTC().Format(time.RFC3339) {
		t.Fatalf("snooze: %+v", out)
	}
	ms, _, _ = ReadAttention(f.audit.Path())
	if m := ms[len(ms)-1]; m.Kind != "snooze" || !m.Until.Equal(f.clock.Now().Add(90*time.Minute)) {
		t.Fatalf("snooze mark %+v", m)
	}
}

// TestAttentionRefusalsWriteNothing: every refusal — bad input, too low a role, read-only —
// leaves every file as it was (a read-only core records nothing at all).
func TestAttentionRefusalsWriteNothing(t *testing.T) {
	for _, tc := range []struct {
		name     string
		role     Role
		readOnly bool
		req      Request
		code     string
	}{
		{name: "no entry", role: RoleOperator, req: ackReq("", "e", "0"), code: CodeInvalidRequest},
		{name: "no evidence", role: RoleOperator, req: ackReq("k", "", "0"), code: CodeInvalidRequest},
		{name: "bad level", role: RoleOperator, req: ackReq("k", "e", "-1"), code: CodeInvalidRequest},
		{name: "snooze without a length", role: RoleOperator, req: Request{Action: actionid.AttentionSnooze, Target: Target{Entry: "k"}, Params: AttentionParams{Evidence: "e"}}, code: CodeInvalidRequest},
		{name: "snooze too long", role: RoleOperator, req: Request{Action: actionid.AttentionSnooze, Target: Target{Entry: "k"}, Params: AttentionParams{Evidence: "e", For: "900h"}}, code: CodeInvalidRequest},
		{name: "viewer", role: RoleViewer, req: ackReq("k", "e", "0"), code: CodeRoleTooLow},
		{name: "read-only", role: RoleOperator, readOnly: true, req: ackReq("k", "e", "0"), code: CodeReadOnly},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, tc.role)
			core := f.newCore(tc.role, tc.readOnly)
			before := f.state()
			pv, err := core.Preview(context.Background(), tc.req)
			if err != nil || pv.Allowed || pv.Refusal.Code != tc.code {
				t.Fatalf("preview: %+v %v; want %s", pv.Refusal, err, tc.code)
			}
			if f.state() != before {
				t.Fatal("a refused preview wrote")
			}
			if tc.readOnly {
				if out := core.Apply(context.Background(), pv, ""); out.Code != CodeReadOnly || f.state() != before {
					t.Fatalf("read-only apply %+v wrote or passed", out)
				}
			}
			if _, err := os.Stat(AttentionPath(f.audit.Path())); !os.IsNotExist(err) {
				t.Fatalf("the attention file exists: %v", err)
			}
		})
	}
}

// TestAttentionFenceMoved: another steward acknowledges the entry between this one's
// preview and apply: the apply refuses fence_moved and adds no mark.
func TestAttentionFenceMoved(t *testing.T) {
	f := newFixture(t, RoleOperator)
	ctx := context.Background()
	req := ackReq("collision:duplicate-live-lock:acme/widgets#3", "e", "0")
	pv, _ := f.core.Preview(ctx, req)
	other := f.newCore(RoleOperator, false)
	if _, out, _ := other.Run(ctx, Request{Action: actionid.AttentionSnooze, Target: req.Target, Params: AttentionParams{Evidence: "e", For: "1h"}}, ""); out.Result != ResultSucceeded {
		t.Fatalf("other: %+v", out)
	}
	out := f.core.Apply(ctx, pv, "")
	if out.Result != ResultRefused || out.Code != CodeFenceMoved {
		t.Fatalf("apply after another's mark: %+v", out)
	}
	if ms, _, _ := ReadAttention(f.audit.Path()); len(ms) != 1 {
		t.Fatalf("%d marks, want the other's only", len(ms))
	}
}

// TestAttentionTornLine: a torn line in the attention file is a finding, and the next mark
// starts on a line of its own.
func TestAttentionTornLine(t *testing.T) {
	f := newFixture(t, RoleOperator)
	if err := os.WriteFile(AttentionPath(f.audit.Path()), []byte(`{"v":1,"attempt":"att-x","kind":"ack","entr`), 0o600); err != nil {
		t.Fatal(err)
	}
	f.runOK(t, ackReq("k", "e", "0"))
	ms, finds, err := ReadAttention(f.audit.Path())
	if err != nil || len(ms) != 1 || len(finds) != 1 || ms[0].Entry != "k" {
		t.Fatalf("marks %+v findings %+v %v", ms, finds, err)
	}
}
