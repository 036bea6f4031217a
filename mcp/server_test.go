package mcp

import (
	"context"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"steward/govern"
	"steward/govern/actionid"
)

// TestToolsAndAnnotations: every worker tool and its seed name is listed with truthful
// hints, and nothing a supervisor does is.
func TestToolsAndAnnotations(t *testing.T) {
	f := newFx(t, fxOpt{})
	c := f.client("w1")
	type hints struct{ ro, destructive, idempotent bool }
	want := map[string]hints{
		ToolClaim: {false, false, false}, ToolHeartbeat: {false, false, true}, ToolRelease: {false, true, true}, ToolAsk: {false, true, true},
		ToolGetAnswer: {true, false, true}, ToolMyLeases: {true, false, true}, ToolStatus: {true, false, true}, ToolInspect: {true, false, true},
		SeedLockIssue: {false, false, false}, SeedAllocateNextWork: {false, false, false}, SeedHeartbeatLock: {false, false, true},
		SeedReleaseLease: {false, true, true}, SeedInspectContract: {true, false, true}, SeedInspectLease: {true, false, true},
	}
	got := map[string]bool{}
	for tool, err := range c.SDK().Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		got[tool.Name] = true
		w, ok := want[tool.Name]
		if !ok {
			t.Errorf("unexpected tool %q", tool.Name)
			continue
		}
		a := tool.Annotations
		if a == nil || a.ReadOnlyHint != w.ro || a.DestructiveHint == nil || *a.DestructiveHint != w.destructive || a.IdempotentHint != w.idempotent {
			t.Errorf("%s: annotations %+v, want read-only %v destructive %v idempotent %v", tool.Name, a, w.ro, w.destructive, w.idempotent)
		}
		if tool.Description == "" || tool.OutputSchema == nil {
			t.Errorf("%s: no description or output schema", tool.Name)
		}
		for _, bad := range []string{"reclaim", "abandon", "retire", "sweep", "undo", "answer_clarification", "restore"} {
			if strings.Contains(tool.Name, bad) {
				t.Errorf("supervisor tool %s is served", tool.Name)
			}
		}
	}
	for name := range want {
		if !got[name] {
			t.Errorf("tool %s missing", name)
		}
	}
	// A supervisor action is not a tool at all.
	if _, err := c.SDK().CallTool(context.Background(), &sdk.CallToolParams{Name: "lease.reclaim-expired", Arguments: map[string]any{}}); err == nil {
		t.Error("calling a supervisor action by id did not fail")
	}
}

// TestSessionBinding: a session is bound to the connection that used it first; another
// connection naming it without proof of its claims is refused not_owner until the first has
// ended and the session holds no lease (with proof it takes the session up:
// TestRebindWithTheClaimToken).
func TestSessionBinding(t *testing.T) {
	f := newFx(t, fxOpt{})
	ctx := context.Background()
	a := f.client("w1")
	cl := must[Outcome](t)(a.Claim(ctx, ClaimArgs{Item: f.item(2)}))
	b := f.client("w1")
	tokenless := *cl.Fence
	tokenless.ClaimToken = ""
	if o := must[Outcome](t)(b.Heartbeat(ctx, tokenless)); o.Success || o.Code != govern.CodeNotOwner || !strings.Contains(o.Message, "another connection") {
		t.Fatalf("heartbeat from a second connection: %+v", o)
	}
	a.Close()
	f.srv.bind.waitClosed(t)
	if o := must[Outcome](t)(b.Heartbeat(ctx, tokenless)); o.Success || o.Code != govern.CodeNotOwner || !strings.Contains(o.Message, "still holds an active lease") {
		t.Fatalf("heartbeat after the first connection ended, lease held: %+v", o)
	}
	// Once the lease is gone the session may be taken up again.
	_, out, err := f.core.ForSession("w1").Run(ctx, govern.Request{Action: actionid.Release, Target: govern.Target{LeaseID: cl.Fence.LeaseID, Session: "w1"},
		Params: govern.OwnLeaseParams{OwnerProof: govern.OwnerProof{ClaimToken: cl.Fence.ClaimToken}}}, "")
	if err != nil || out.Result != govern.ResultSucceeded {
		t.Fatalf("release through the core: %+v %v", out, err)
	}
	if m := must[MyLeases](t)(b.MyLeases(ctx)); !m.Success {
		t.Fatalf("my_leases on a free session from a new connection: %+v", m)
	}
}

// TestProcessBinding: over stdio the connection's worker is the process that started
// steward mcp; a claim names it, a pid argument that differs is refused, and a lease of
// another process is refused not_owner by the core (audited).
func TestProcessBinding(t *testing.T) {
	f := newFx(t, fxOpt{clientPID: 5151})
	ctx := context.Background()
	c := f.client("w1")
	if o := must[Outcome](t)(c.Claim(ctx, ClaimArgs{Item: f.item(8), PID: 6262})); o.Success || o.Code != govern.CodeInvalidRequest {
		t.Fatalf("claim naming another process: %+v", o)
	}
	cl := must[Outcome](t)(c.Claim(ctx, ClaimArgs{Item: f.item(8)}))
	l, ok, err := f.srv.reads.lease(ctx, cl.Fence.LeaseID)
	if err != nil || !ok || l.OwnerPID != 5151 {
		t.Fatalf("lease owner pid %d (%v %v), want the client process 5151", l.OwnerPID, ok, err)
	}
	// The same session from another steward mcp process (another worker process) is refused.
	g := New(Config{Core: f.core, ClientPID: 7373})
	defer g.Close()
	st, ct := sdk.NewInMemoryTransports()
	ss, err := g.SDK().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	other, err := Connect(ctx, ct, "w1")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	n := len(f.attempts())
	if o := must[Outcome](t)(other.Heartbeat(ctx, *cl.Fence)); o.Success || o.Code != govern.CodeNotOwner || !strings.Contains(o.Message, "process 5151") {
		t.Fatalf("heartbeat from another process: %+v", o)
	}
	if len(f.attempts()) != n+1 {
		t.Fatal("the core did not record the refused heartbeat")
	}
	if o := must[Outcome](t)(c.Heartbeat(ctx, *cl.Fence)); !o.Success {
		t.Fatalf("heartbeat from the claiming process: %+v", o)
	}
}

// TestRoleAndReadOnly: the core's role and read-only switch refuse as on the CLI.
func TestRoleAndReadOnly(t *testing.T) {
	for _, tc := range []struct {
		opt  fxOpt
		code string
	}{
		{fxOpt{role: govern.RoleViewer}, govern.CodeRoleTooLow},
		{fxOpt{readOnly: true}, govern.CodeReadOnly},
	} {
		f := newFx(t, tc.opt)
		o := must[Outcome](t)(f.client("w1").Claim(context.Background(), ClaimArgs{Item: f.item(1)}))
		if o.Success || o.Code != tc.code || !strings.Contains(o.Next, "operator") {
			t.Fatalf("%s: %+v", tc.code, o)
		}
	}
}

// TestInspectAndStatus: the read-only tools over a canonical lock, an absent one and a
// mismatched binding.
func TestInspectAndStatus(t *testing.T) {
	f := newFx(t, fxOpt{})
	ctx := context.Background()
	c := f.client("w1")
	var ct Contract
	if _, err := c.Call(ctx, ToolInspect, InspectArgs{SessionID: "w1", Org: "acme", Repo: "widgets", IssueNumber: 9}, &ct); err != nil ||
		!ct.Success || ct.Contract != "absent" || !strings.Contains(ct.RecommendedAction, "claim") {
		t.Fatalf("absent: %+v %v", ct, err)
	}
	st := must[ItemStatus](t)(c.ItemStatus(ctx, *f.item(9)))
	if !st.Success || !st.Claimable || st.Gitea != "not_configured" {
		t.Fatalf("status of a free item: %+v", st)
	}
	cl := must[Outcome](t)(c.Claim(ctx, ClaimArgs{Item: f.item(9), Branch: "feat/issue-9"}))
	if _, err := c.Call(ctx, SeedInspectContract, InspectArgs{SessionID: "w1", Org: "acme", Repo: "widgets", IssueNumber: 9, BranchName: "feat/other"}, &ct); err != nil ||
		!ct.Success || !ct.Canonical || ct.TaskSessionID != cl.Fence.TaskSessionID || len(ct.BindingMismatches) != 1 || !ct.Heartbeatable {
		t.Fatalf("canonical, other branch: %+v %v", ct, err)
	}
	other := f.client("w2")
	st = must[ItemStatus](t)(other.ItemStatus(ctx, *f.item(9)))
	if !st.Success || st.Claimable || len(st.Leases) != 1 || st.Leases[0].Yours || st.Leases[0].Fence != nil || st.Lock == nil || st.Lock.LockGeneration != 1 {
		t.Fatalf("status of a held item to another session: %+v", st)
	}
	var ml MyLeases
	if _, err := other.Call(ctx, SeedInspectLease, InspectLeaseArgs{SessionID: "w2", LeaseID: cl.Fence.LeaseID}, &ml); err != nil || !ml.Success || ml.Leases[0].Fence != nil {
		t.Fatalf("inspect another's lease: %+v %v", ml, err)
	}
	if !slices.ContainsFunc(st.Leases, func(l LeaseView) bool { return l.SessionID == "w1" }) {
		t.Fatal("status does not name the holder")
	}
}

// waitClosed waits until the binder has seen a connection end.
func (b *binder) waitClosed(t *testing.T) {
	t.Helper()
	for {
		b.mu.Lock()
		for _, c := range b.owner {
			if c.closed {
				b.mu.Unlock()
				return
			}
		}
		b.mu.Unlock()
		select {
		case <-t.Context().Done():
			t.Fatal("no connection ended")
		case <-b.changed():
		}
	}
}
