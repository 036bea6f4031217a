package govern

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"steward/govern/actionid"
	"steward/locks"
)

// A claim whose pid or TTL does not parse is refused by its preview, saying what is
// accepted: before, pid "abc" was read as "no pid" and the claim
// succeeded without one, and a bad TTL was refused only on apply, with Go's parser text.
func TestClaimRefusesUnparsableNumbers(t *testing.T) {
	for _, tc := range []struct {
		name, pid, ttl, want string
	}{
		{"pid not a number", "abc", "", "is not a process id"},
		{"pid zero", "0", "", "is not a process id"},
		{"pid beyond pid_t", "4294967296", "", "is not a process id"},
		{"pid one past the largest", "2147483648", "", "is not a process id"},
		{"ttl zero", "", "0s", "is not a positive duration"},
		{"ttl without a unit", "", "5", "is not a positive duration"},
		{"ttl garbage", "", "5x", "is not a positive duration"},
		{"ttl negative", "", "-1m", "is not a positive duration"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, RoleOperator)
			params := ClaimParams{Role: "author", Username: "bot", PID: tc.pid, TTL: tc.ttl}
			pv, out, err := f.core.Run(context.Background(), Request{Action: actionid.Claim, Target: Target{Item: item(7), Session: "s1"}, Params: params}, "")
			if err != nil {
				t.Fatal(err)
			}
			if pv.Allowed || pv.Refusal == nil || pv.Refusal.Code != CodeInvalidRequest || !strings.Contains(pv.Refusal.Message, tc.want) {
				t.Fatalf("preview %+v, want invalid_request %q", pv.Refusal, tc.want)
			}
			if out.Result != ResultRefused || strings.Contains(out.Message, "strconv") || strings.Contains(out.Message, "time: ") {
				t.Fatalf("apply %+v", out)
			}
			if recs := f.records(); len(recs) != 1 || recs[0].Result != ResultRefused {
				t.Fatalf("audit %+v", recs)
			}
		})
	}
}

// TestClaimAcceptsTheBoundaryNumbers: the largest pid a process can have (2147483647) and
// the shortest positive TTL pass the claim's preview; an item numbered 0 does not.
func TestClaimAcceptsTheBoundaryNumbers(t *testing.T) {
	f := newFixture(t, RoleOperator)
	pv, err := f.core.Preview(context.Background(), Request{Action: actionid.Claim, Target: Target{Item: item(7), Session: "s1"},
		Params: ClaimParams{Role: "author", Username: "bot", PID: "2147483647", TTL: "1ns"}})
	if err != nil || !pv.Allowed {
		t.Fatalf("preview at the boundaries: %+v %v, want allowed", pv.Refusal, err)
	}
	zero := item(7)
	zero.Number = 0
	pv, err = f.core.Preview(context.Background(), Request{Action: actionid.Claim, Target: Target{Item: zero, Session: "s1"},
		Params: ClaimParams{Role: "author", Username: "bot"}})
	if err != nil || pv.Allowed || pv.Refusal == nil || pv.Refusal.Code != CodeInvalidRequest {
		t.Fatalf("preview of item 0: %+v %v, want invalid_request", pv.Refusal, err)
	}
}

// TestClaimWithoutAPIDWritesNone: a claim that gives no pid writes a lock without pid and
// session_pid — never pid 0, which a liveness probe would ask about — and one that gives a
// pid writes it in both.
func TestClaimWithoutAPIDWritesNone(t *testing.T) {
	for _, c := range []struct {
		pid  string
		want int64 // 0: no pid recorded
	}{{"", 0}, {"4242", 4242}} {
		f := newFixture(t, RoleOperator)
		_, out, err := f.core.Run(context.Background(), Request{Action: actionid.Claim, Target: Target{Item: item(7), Session: "s1"},
			Params: ClaimParams{Role: "author", Username: "bot", PID: c.pid}}, "")
		if err != nil || out.Result != ResultSucceeded {
			t.Fatalf("claim with pid %q: %+v %v", c.pid, out, err)
		}
		e := locks.ReadFile(f.ws.LocksDir, out.Detail["lock_file"])
		switch {
		case c.want == 0 && (e.Record.PID != nil || e.Record.SessionPID != nil):
			t.Errorf("no pid given, yet the lock records pid %s, session_pid %s", pidText(e.Record.PID), pidText(e.Record.SessionPID))
		case c.want != 0 && (e.Record.PID == nil || *e.Record.PID != c.want || e.Record.SessionPID == nil ||
			*e.Record.SessionPID != c.want):
			t.Errorf("pid %d given, the lock records %s, %s", c.want, pidText(e.Record.PID), pidText(e.Record.SessionPID))
		}
	}
}

func pidText(p *int64) string {
	if p == nil {
		return "none"
	}
	return strconv.FormatInt(*p, 10)
}
