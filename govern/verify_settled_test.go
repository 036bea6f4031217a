package govern

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"steward/govern/actionid"
	"steward/leases"
)

// TestVerifiedSuccessKeepsItsUndo: an answer whose outcome record never reached the audit
// log (the process died after Gitea took the change) is settled succeeded by Verify from
// Gitea's evidence, and that resolution carries the intent's inverse, so the answer can
// still be undone: the marker comes back (verify.go:86).
func TestVerifiedSuccessKeepsItsUndo(t *testing.T) {
	f := newFixture(t, RoleOperator)
	f.withGitea()
	ctx := context.Background()
	n := f.markedIssue()
	_, out, err := f.core.Run(ctx, Request{Action: actionid.Answer, Target: Target{Item: item(n)},
		Params: AnswerParams{Body: "Use **v2**."}}, "")
	if err != nil || out.Result != ResultSucceeded {
		t.Fatalf("answer: %+v %v", out, err)
	}
	// Drop the outcome record: the log ends at the attempt's intent.
	lines := bytes.SplitAfter(mustRead(t, f.audit.Path()), []byte("\n"))
	if len(lines) != 3 || len(lines[2]) != 0 || !bytes.Contains(lines[1], []byte(`"`+KindOutcome+`"`)) {
		t.Fatalf("audit log: want intent and outcome, got %q", lines)
	}
	if err := os.WriteFile(f.audit.Path(), lines[0], 0o600); err != nil {
		t.Fatal(err)
	}

	v := f.verifyOne()
	if v.Attempt != out.Attempt || v.Result != ResultSucceeded {
		t.Fatalf("verify of the answer Gitea took: %s %v; want succeeded", v.Result, v.Evidence)
	}
	pv, u, err := f.core.Run(ctx, Request{Action: actionid.Undo, Target: Target{Attempt: out.Attempt}}, "")
	if err != nil || u.Result != ResultSucceeded {
		t.Fatalf("undo of the verified answer: %+v %+v %v", pv.Refusal, u, err)
	}
	if is, _ := f.ws.Gitea.GetIssue(ctx, n); !is.HasLabel("status:blocked-pending-clarification") {
		t.Fatalf("the undo did not re-add the marker: %v", is.Labels)
	}
}

// TestPendingNoteNamesTheTransactionState: an attempt whose transaction the PostgreSQL
// server still runs is left alone with a note naming the server process and its state as
// the server reports it, "in a transaction" when it reports none (verify.go:160).
func TestPendingNoteNamesTheTransactionState(t *testing.T) {
	since := now0.Add(-time.Minute)
	cases := []struct {
		state, want string
	}{
		{"idle in transaction", "(server process 4242, idle in transaction since " + stamp(since) + ")"},
		{"active", "(server process 4242, active since " + stamp(since) + ")"},
		{"", "(server process 4242, in a transaction since " + stamp(since) + ")"},
	}
	for _, tc := range cases {
		note := pendingNote([]leases.Backend{{PID: 4242, State: tc.state, Since: since}})
		if !strings.Contains(note, tc.want) || !strings.Contains(note, "pg_terminate_backend(4242)") {
			t.Errorf("state %q: note %q, want it to say %q and how to end the process", tc.state, note, tc.want)
		}
	}
}
