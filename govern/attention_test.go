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
	if pv.Allowed || pv.Refusal.Code != codeAlreadyAcknowledged || !strings.Contains(pv.Refusal.Message, "maint acknowledged") {
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

// TestAttentionParamBounds: the ends of each parameter's range — level 0 to 1000, a snooze
// longer than nothing and at most MaxSnooze — are allowed, one step past each is refused,
// and a refused length is quoted whole up to 40 bytes, cut with an ellipsis after; an
// allowed one's preview names the file its mark goes to.
func TestAttentionParamBounds(t *testing.T) {
	f := newFixture(t, RoleOperator)
	ctx := context.Background()
	snooze := func(d string) Request {
		return Request{Action: actionid.AttentionSnooze, Target: Target{Entry: "k"}, Params: AttentionParams{Evidence: "e", For: d}}
	}
	long := strings.Repeat("9", 40) // not a duration: no unit
	for _, c := range []struct {
		name  string
		req   Request
		allow bool
		says  string
	}{
		{"level 0", ackReq("k", "e", "0"), true, ""},
		{"level 1000", ackReq("k", "e", "1000"), true, ""},
		{"level 1001", ackReq("k", "e", "1001"), false, `level "1001"`},
		{"level -1", ackReq("k", "e", "-1"), false, `level "-1"`},
		{"a snooze of 40 bytes", snooze(long), false, `snooze for "` + long + `"`},
		{"a snooze of 41 bytes", snooze(long + "9"), false, `snooze for "` + long + `…"`},
		{"snooze 1s", snooze("1s"), true, ""},
		{"snooze MaxSnooze", snooze(MaxSnooze.String()), true, ""},
		{"snooze past MaxSnooze", snooze((MaxSnooze + time.Second).String()), false, "snooze for"},
		{"snooze 0s", snooze("0s"), false, `snooze for "0s"`},
	} {
		before := f.state()
		pv, err := f.core.Preview(ctx, c.req)
		if err != nil || pv.Allowed != c.allow {
			t.Errorf("%s: allowed %v (%+v) %v, want %v", c.name, pv.Allowed, pv.Refusal, err, c.allow)
			continue
		}
		if !c.allow && (pv.Refusal.Code != CodeInvalidRequest || !strings.Contains(pv.Refusal.Message, c.says)) {
			t.Errorf("%s: %+v, want invalid_request saying %s", c.name, pv.Refusal, c.says)
		}
		if c.allow && !strings.Contains(strings.Join(pv.Effects, " "), "recorded in "+AttentionPath(f.audit.Path())) {
			t.Errorf("%s: the effects %q do not name the attention file", c.name, pv.Effects)
		}
		if f.state() != before {
			t.Errorf("%s: the preview wrote", c.name)
		}
	}
}

// TestAttentionFindingsNameTheirLine: each line of the attention file that is not a mark is a
// finding naming its line (blank lines counted) and why: the decoder's error for a line that
// is not JSON, "not a mark" for JSON that is not one.
func TestAttentionFindingsNameTheirLine(t *testing.T) {
	f := newFixture(t, RoleOperator)
	body := `{"v":1,"attempt":"att-1","kind":"ack","entry":"k","evidence":"e"}` + "\n\n" +
		`{"v":1,"attempt":"att-2","kind":"poke","entry":"k"}` + "\n" + `{"v":1,"att` + "\n"
	if err := os.WriteFile(AttentionPath(f.audit.Path()), []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	ms, finds, err := ReadAttention(f.audit.Path())
	if err != nil || len(ms) != 1 || len(finds) != 2 {
		t.Fatalf("marks %+v findings %+v %v", ms, finds, err)
	}
	if finds[0].Line != 3 || !strings.HasSuffix(finds[0].Reason, ": not a mark") {
		t.Errorf("the JSON that is not a mark: %+v, want line 3, not a mark", finds[0])
	}
	if finds[1].Line != 4 || !strings.Contains(finds[1].Reason, "unexpected end of JSON input") {
		t.Errorf("the torn line: %+v, want line 4 and the decoder's error", finds[1])
	}
}
