package govern

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"steward/govern/actionid"
	"steward/locks"
)

// dropOutcomes rewrites the audit log without the outcome records of the attempts named,
// as if each process died after its effects and before its outcome.
func (f *fixture) dropOutcomes(attempts ...string) {
	f.t.Helper()
	var kept []byte
	for _, line := range bytes.SplitAfter(mustRead(f.t, f.audit.Path()), []byte("\n")) {
		var r Record
		if len(line) > 0 {
			if err := json.Unmarshal(line, &r); err != nil {
				f.t.Fatal(err)
			}
		}
		for _, a := range attempts {
			if r.Attempt == a && r.Kind == KindOutcome {
				line = nil
			}
		}
		kept = append(kept, line...)
	}
	if err := os.WriteFile(f.audit.Path(), kept, 0o600); err != nil {
		f.t.Fatal(err)
	}
}

// TestVerifyReleaseByItsOwnArchive: two releases of item 7's successive leases, each
// archiving its lock, lose their outcome records; the item is claimed a third time, its
// live lock naming the new lease. Verify settles each release succeeded from the archive
// whose recovery block names that release's attempt — never the other release's archive —
// and the new claim's live lock is no sign that a release stopped short
// (actions_release.go: the archive's attempt match, the walk stopping at it, the live
// lock's lease check, the archive named in the evidence).
func TestVerifyReleaseByItsOwnArchive(t *testing.T) {
	f := newFixture(t, RoleOperator)
	ctx := context.Background()
	release := func(session string) (attempt, archived string) {
		t.Helper()
		out := f.claim(session, 7)
		_, rel, err := f.core.Run(ctx, Request{Action: actionid.Release, Target: Target{LeaseID: out.Detail["lease_id"], Session: session}}, "")
		if err != nil || rel.Result != ResultSucceeded || rel.Detail["archived_as"] == "" {
			t.Fatalf("release by %s: %+v %v", session, rel, err)
		}
		return rel.Attempt, rel.Detail["archived_as"]
	}
	a1, arch1 := release("s1")
	a2, arch2 := release("s2")
	live := f.claim("s3", 7)
	if e := locks.ReadFile(f.ws.LocksDir, live.Detail["lock_file"]); e.Missing || e.Record.LeaseID != live.Detail["lease_id"] {
		t.Fatalf("the third claim's live lock: %+v", e)
	}
	f.dropOutcomes(a1, a2)

	vs, err := f.core.Verify(ctx)
	if err != nil || len(vs) != 2 {
		t.Fatalf("verify: %+v %v; want the two releases", vs, err)
	}
	want := map[string]string{a1: arch1, a2: arch2}
	for _, v := range vs {
		ev := strings.Join(v.Evidence, " ")
		if v.Action != actionid.Release || v.Result != ResultSucceeded || !strings.Contains(ev, "its lock was archived as "+want[v.Attempt]) {
			t.Errorf("verify of release %s: %s %q; want succeeded, archived as %s", v.Attempt, v.Result, ev, want[v.Attempt])
		}
	}
}
