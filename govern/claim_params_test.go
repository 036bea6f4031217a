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
	"steward/leases"
	"steward/leases/leaserec"
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

// TestClaimLosingTheLockRaceReleasesItsLease: another writer creates the item's lock
// (naming its own lease) after the claim committed its lease and before it writes the
// lock. The claim is refused claimed_by_other — not unknown: steward knows the lock is not
// its own — its lease is released again with the reason lock_conflict, and the other
// writer's lock is left as it was.
func TestClaimLosingTheLockRaceReleasesItsLease(t *testing.T) {
	f := newFixture(t, RoleOperator)
	var other []byte
	c := New(f.ws, f.audit, Options{Actor: f.core.actor, Now: f.clock.Now, Step: func(step string) {
		if step != "lease-committed" || other != nil {
			return
		}
		name := f.lockFile(7, time.Hour, int64(os.Getpid()))
		var err error
		if other, err = os.ReadFile(filepath.Join(f.ws.LocksDir, name)); err != nil {
			t.Fatal(err)
		}
	}})
	defer c.Close()
	_, out, err := c.Run(context.Background(), Request{Action: actionid.Claim, Target: Target{Item: item(7), Session: "s1"},
		Params: ClaimParams{Role: "author", Username: "bot"}}, "")
	if err != nil || other == nil {
		t.Fatalf("claim: %v (the other lock written: %v)", err, other != nil)
	}
	if out.Result != ResultRefused || out.Code != CodeClaimedByOther {
		t.Fatalf("outcome %+v, want refused claimed_by_other", out)
	}
	r, err := leases.OpenReader(f.ws.DBTarget())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	hist, err := r.LeaseHistory(context.Background(), work(7))
	if err != nil || len(hist) != 1 {
		t.Fatalf("the item's leases: %+v %v, want the claim's one", hist, err)
	}
	if l := hist[0]; l.Status != leaserec.StatusReleased || l.EndReason != "lock_conflict" ||
		!strings.Contains(out.Message, l.LeaseID+" was released again") {
		t.Errorf("the claim's lease %s is %s (%s), want released for lock_conflict and named: %q",
			l.LeaseID, l.Status, l.EndReason, out.Message)
	}
	name, _ := locks.Name(lockKey(work(7)))
	if got, err := os.ReadFile(filepath.Join(f.ws.LocksDir, name)); err != nil || string(got) != string(other) {
		t.Errorf("the other writer's lock changed: %v", err)
	}
}

// TestVerifyClaimOfAnotherRemote: the verifier of a claim looks the item up under the
// remote the claim named — "upstream" here — not the default one.
func TestVerifyClaimOfAnotherRemote(t *testing.T) {
	f := newFixture(t, RoleOperator)
	it := item(7)
	it.Remote = "upstream"
	_, out, err := f.core.Run(context.Background(), Request{Action: actionid.Claim, Target: Target{Item: it, Session: "s1"},
		Params: ClaimParams{Role: "author", Username: "bot"}}, "")
	if err != nil || out.Result != ResultSucceeded {
		t.Fatalf("claim on upstream: %+v %v", out, err)
	}
	var intent Record
	for _, r := range f.records() {
		if r.Attempt == out.Attempt && r.Kind == KindIntent {
			intent = r
		}
	}
	res, ev, ok := claimAction{}.verify(context.Background(), f.core, intent)
	if !ok || res != ResultSucceeded {
		t.Fatalf("verify of the claim on upstream: %s %v %v, want succeeded", res, ev, ok)
	}
}
