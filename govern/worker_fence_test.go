package govern

import (
	"context"
	"strconv"
	"testing"
	"time"

	"steward/govern/actionid"
	"steward/leases/seedtest"
)

// TestWorkerFenceValues: a claim and a heartbeat return the fence a worker holds next
// (lease expires_at, lock generation, task_session_id); a heartbeat or release fenced on
// values that moved is refused fence_moved and writes nothing but its refused record.
func TestWorkerFenceValues(t *testing.T) {
	f := newFixture(t, RoleOperator)
	out := f.claim("s1", 7)
	d := out.Detail
	if d["lease_id"] == "" || d["expires_at"] == "" || d["lock_generation"] != "1" || d["task_session_id"] == "" || d["heartbeat_count"] != "0" {
		t.Fatalf("claim detail lacks the fence: %v", d)
	}
	hb := func(params Params) Outcome {
		t.Helper()
		_, o, err := f.core.Run(context.Background(), Request{Action: actionid.Heartbeat, Target: Target{LeaseID: d["lease_id"], Session: "s1"}, Params: params}, "")
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	fence := func(d map[string]string) OwnLeaseParams {
		return OwnLeaseParams{HeldFence: HeldFence{ExpiresAt: d["expires_at"], LockGeneration: d["lock_generation"], TaskSession: d["task_session_id"]}}
	}
	f.clock.Add(time.Minute)
	o1 := hb(fence(d))
	if o1.Result != ResultSucceeded || o1.Detail["lock_generation"] != "2" || o1.Detail["expires_at"] == d["expires_at"] || o1.Detail["heartbeat_count"] != "1" ||
		o1.Detail["task_session_id"] != d["task_session_id"] {
		t.Fatalf("heartbeat on the claim's fence: %+v", o1)
	}
	cases := []struct {
		name   string
		params HeldFence
		code   string
	}{
		{"old expiry", HeldFence{ExpiresAt: d["expires_at"]}, CodeFenceMoved},
		{"old lock generation", HeldFence{LockGeneration: d["lock_generation"]}, CodeFenceMoved},
		{"other task session", HeldFence{TaskSession: "tsk-someone-else"}, CodeFenceMoved},
		{"bad generation", HeldFence{LockGeneration: "two"}, CodeInvalidRequest},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, action := range []string{actionid.Heartbeat, actionid.Release} {
				before := f.state()
				pv, err := f.core.Preview(context.Background(), Request{Action: action, Target: Target{LeaseID: d["lease_id"], Session: "s1"}, Params: OwnLeaseParams{HeldFence: tc.params}})
				if err != nil || pv.Allowed || pv.Refusal.Code != tc.code {
					t.Fatalf("%s preview: %v %+v, want %s", action, err, pv.Refusal, tc.code)
				}
				if f.state() != before {
					t.Fatalf("%s: a refused preview wrote something", action)
				}
				o := f.core.Apply(context.Background(), pv, "")
				if o.Result != ResultRefused || o.Code != tc.code {
					t.Fatalf("%s apply: %+v", action, o)
				}
				assertOneTerminal(t, f, o.Attempt)
			}
		})
	}
	// The current fence still works, and release returns what it archived.
	_, rel, err := f.core.Run(context.Background(), Request{Action: actionid.Release, Target: Target{LeaseID: d["lease_id"], Session: "s1"}, Params: fence(o1.Detail)}, "")
	if err != nil || rel.Result != ResultSucceeded || rel.Detail["lease_id"] != d["lease_id"] || rel.Detail["archived_as"] == "" {
		t.Fatalf("release on the current fence: %+v %v", rel, err)
	}
}

// TestForSession: a core bound to a worker session names the session in every record and
// refuses a worker action for another session, while sharing the parent's handles.
func TestForSession(t *testing.T) {
	f := newFixture(t, RoleOperator)
	w := f.core.ForSession("s1")
	_, out, err := w.Run(context.Background(), Request{Action: actionid.Claim, Target: Target{Item: item(3), Session: "s1"}}, "")
	if err != nil || out.Result != ResultSucceeded {
		t.Fatalf("claim as the bound session: %+v %v", out, err)
	}
	_, other, err := w.Run(context.Background(), Request{Action: actionid.Claim, Target: Target{Item: item(4), Session: "s2"}}, "")
	if err != nil || other.Result != ResultRefused || other.Code != CodeNotOwner {
		t.Fatalf("claim for another session through a bound core: %+v %v", other, err)
	}
	for _, r := range f.records() {
		if r.Actor.Session != "s1" {
			t.Fatalf("record %s %s names session %q, want s1", r.Attempt, r.Kind, r.Actor.Session)
		}
	}
	if f.core.Actor().Session != "" {
		t.Fatalf("ForSession changed the parent's actor")
	}
	if n, _ := strconv.Atoi(out.Detail["lock_generation"]); n != 1 {
		t.Fatalf("claim detail: %v", out.Detail)
	}
}

// TestCallerPIDBindsTheLease: a heartbeat naming another caller process than the one that
// claimed is refused not_owner (and audited); the claiming process's own call succeeds.
func TestCallerPIDBindsTheLease(t *testing.T) {
	f := newFixture(t, RoleOperator)
	_, out, err := f.core.Run(context.Background(), Request{Action: actionid.Claim, Target: Target{Item: item(5), Session: "s1"}, Params: ClaimParams{PID: "4242"}}, "")
	if err != nil || out.Result != ResultSucceeded {
		t.Fatalf("claim: %+v %v", out, err)
	}
	hb := func(pid string) Outcome {
		_, o, err := f.core.Run(context.Background(), Request{Action: actionid.Heartbeat, Target: Target{LeaseID: out.Detail["lease_id"], Session: "s1"},
			Params: OwnLeaseParams{OwnerProof: OwnerProof{CallerPID: pid}}}, "")
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	if o := hb("4343"); o.Result != ResultRefused || o.Code != CodeNotOwner {
		t.Fatalf("heartbeat from another process: %+v", o)
	} else {
		assertOneTerminal(t, f, o.Attempt)
	}
	if o := hb("4242"); o.Result != ResultSucceeded {
		t.Fatalf("heartbeat from the claiming process: %+v", o)
	}
}

// TestLeaseGenerationFence: on a DB with the seed's lease_generation_id, a claim returns the
// lease's generation and a heartbeat fenced on another generation is refused fence_moved.
func TestLeaseGenerationFence(t *testing.T) {
	f := newFixture(t, RoleOperator)
	db := seedtest.New(t, seedtest.Options{Add: []string{"leases.lease_generation_id INTEGER"}})
	f.ws.DBPath = db.Path
	f.core = f.newCore(RoleOperator, false)
	out := f.claim("s1", 4)
	if out.Detail["lease_generation"] != "1" {
		t.Fatalf("claim detail on a generation-fenced DB: %v", out.Detail)
	}
	for _, tc := range []struct {
		gen  string
		want Result
	}{{"2", ResultRefused}, {"1", ResultSucceeded}} {
		_, o, err := f.core.Run(context.Background(), Request{Action: actionid.Heartbeat, Target: Target{LeaseID: out.Detail["lease_id"], Session: "s1"},
			Params: OwnLeaseParams{HeldFence: HeldFence{LeaseGeneration: tc.gen}}}, "")
		if err != nil || o.Result != tc.want || tc.want == ResultRefused && o.Code != CodeFenceMoved {
			t.Fatalf("heartbeat fenced on generation %s: %+v %v", tc.gen, o, err)
		}
	}
}
