package govern

import (
	"context"
	"os"
	"path/filepath"
	"steward/govern/actionid"
	"strings"
	"testing"
)

// An attempt still being applied is left alone by Verify and by a human resolution, from
// another core on the same audit log; once it ends it has exactly one outcome, its own. A
// marker left by a process that died does not hold its attempt back.
func TestVerifyLeavesAttemptsInFlightAlone(t *testing.T) {
	f := newFixture(t, RoleOperator)
	reached, proceed := make(chan struct{}), make(chan struct{})
	applying := New(f.ws, f.audit, Options{Actor: Actor{OSUser: "tester", Host: f.ws.Host, Role: RoleOperator}, Now: f.clock.Now,
		Step: func(s string) {
			if s == "intent-written" {
				close(reached)
				<-proceed
			}
		}})
	defer applying.Close()
	done := make(chan Outcome, 1)
	go func() {
		_, out, err := applying.Run(context.Background(), Request{Action: actionid.Claim,
			Target: Target{Session: "s-inflight", Item: &Item{Org: "acme", Repo: "widgets", Kind: "issue", Number: 4}}}, "")
		if err != nil {
			t.Error(err)
		}
		done <- out
	}()
	<-reached

	before, err := os.ReadFile(f.audit.Path())
	if err != nil {
		t.Fatal(err)
	}
	vs, err := f.core.Verify(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 1 || vs[0].Result != ResultUnknown || !strings.Contains(vs[0].Note, "still being applied") {
		t.Fatalf("verify of an attempt in flight: %+v", vs)
	}
	if err := f.core.ResolveByHuman(vs[0].Attempt, ResultFailed, "looks stuck"); err == nil || !strings.Contains(err.Error(), "still being applied") {
		t.Fatalf("a human resolution of an attempt in flight: %v", err)
	}
	if after, _ := os.ReadFile(f.audit.Path()); string(after) != string(before) {
		t.Fatalf("the audit log changed while the attempt was in flight:\n%s", after[len(before):])
	}

	close(proceed)
	if out := <-done; out.Result != ResultSucceeded {
		t.Fatalf("the apply: %+v", out)
	}
	recs, _, err := ReadAudit(f.audit.Path())
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range Attempts(recs) {
		if a.Outcome == nil || a.Status() != ResultSucceeded {
			t.Fatalf("attempt %s: outcome %+v status %s", a.ID, a.Outcome, a.Status())
		}
	}
	if ents, _ := os.ReadDir(f.audit.Path() + ".inflight"); len(ents) != 0 {
		t.Fatalf("in-flight markers left after the apply: %v", ents)
	}

	// A marker whose holder died (no lock on it) and an intent with no outcome: interrupted.
	intent := recs[0]
	intent.Attempt, intent.Kind, intent.Result, intent.Disposition = "att-dead-holder", KindIntent, "", ""
	if err := f.audit.Append(intent); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(f.audit.Path()+".inflight", "att-dead-holder")
	if err := os.WriteFile(marker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	vs, err = f.core.Verify(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 1 || strings.Contains(vs[0].Note, "still being applied") {
		t.Fatalf("verify of an interrupted attempt: %+v", vs)
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Fatalf("the stale marker is still there: %v", err)
	}
}

// A read-only core verifies without recording and refuses a human resolution.
func TestReadOnlyVerifyRecordsNothing(t *testing.T) {
	f := newFixture(t, RoleOperator)
	if err := f.audit.Append(Record{Attempt: "att-ro", Kind: KindIntent, Action: actionid.Claim,
		Target: Target{Session: "s", Item: &Item{Org: "acme", Repo: "widgets", Kind: "issue", Number: 9}}}); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(f.audit.Path())
	ro := f.newCore(RoleOperator, true)
	vs, err := ro.Verify(context.Background())
	if err != nil || len(vs) != 1 || vs[0].Attempt != "att-ro" {
		t.Fatalf("verify: %+v %v", vs, err)
	}
	if err := ro.ResolveByHuman("att-ro", ResultFailed, "no"); err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Fatalf("resolve in read-only: %v", err)
	}
	if after, _ := os.ReadFile(f.audit.Path()); string(after) != string(before) {
		t.Fatalf("a read-only core wrote to the audit log:\n%s", after[len(before):])
	}
}
