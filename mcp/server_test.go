package mcp

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"steward/govern"
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

// TestClaimHeartbeatRelease walks a claim through its fence and checks each step's audit
// record names the worker's session as the actor.
func TestClaimHeartbeatRelease(t *testing.T) {
	f := newFx(t, fxOpt{})
	c := f.client("w1")
	ctx := context.Background()
	ok := must[Outcome](t)
	cl := ok(c.Claim(ctx, ClaimArgs{Item: f.item(7), PID: 4242}))
	if !cl.Success || cl.Result != "succeeded" || cl.Fence == nil || cl.Fence.LockGeneration != 1 || cl.Fence.TaskSessionID == "" ||
		cl.Fence.ExpiresAt == "" || cl.Attempt == "" || cl.HeartbeatEvery == "" || cl.Item.Remote != "origin" {
		t.Fatalf("claim: %+v", cl)
	}
	hb := ok(c.Heartbeat(ctx, *cl.Fence))
	if !hb.Success || hb.Fence.LockGeneration != 2 || hb.Fence.ExpiresAt == "" || hb.Fence.LeaseID != cl.Fence.LeaseID || hb.Item == nil || hb.Item.Number != 7 {
		t.Fatalf("heartbeat: %+v", hb)
	}
	ml, err := c.MyLeases(ctx)
	if err != nil || !ml.Success || len(ml.Leases) != 1 || *ml.Leases[0].Fence != *hb.Fence || !ml.Leases[0].Yours {
		t.Fatalf("my_leases: %+v %v (want the heartbeat's fence %+v)", ml, err, hb.Fence)
	}
	rel := ok(c.Release(ctx, *hb.Fence))
	if !rel.Success || rel.Fence == nil || rel.Fence.LeaseID != cl.Fence.LeaseID {
		t.Fatalf("release: %+v", rel)
	}
	if ml, _ := c.MyLeases(ctx); len(ml.Leases) != 0 || !strings.Contains(ml.Next, "no lease") {
		t.Fatalf("my_leases after release: %+v", ml)
	}
	atts := f.oneTerminal()
	if len(atts) != 3 {
		t.Fatalf("%d attempts, want 3", len(atts))
	}
	for _, a := range atts {
		if a.Outcome.Actor.Session != "w1" || a.Status() != govern.ResultSucceeded {
			t.Fatalf("attempt %s: actor session %q, status %s", a.ID, a.Outcome.Actor.Session, a.Status())
		}
	}
}

// TestRefusalsAreStructured: each tool's refusal paths come back as results (isError set,
// success false, code, next) — never protocol errors — and write nothing but the core's
// refused record (a refusal before the core writes nothing at all).
func TestRefusalsAreStructured(t *testing.T) {
	f := newFx(t, fxOpt{})
	ctx := context.Background()
	w1, w2 := f.client("w1"), f.client("w2")
	cl := must[Outcome](t)(w1.Claim(ctx, ClaimArgs{Item: f.item(3)}))
	if !cl.Success {
		t.Fatalf("claim: %+v", cl)
	}
	stale := *cl.Fence
	hb := must[Outcome](t)(w1.Heartbeat(ctx, *cl.Fence))
	if !hb.Success {
		t.Fatalf("heartbeat: %+v", hb)
	}
	cases := []struct {
		name    string
		c       *Client
		tool    string
		args    any
		code    string
		audited bool // the core saw it and recorded a refused attempt
		event   bool // a refused claim records its claim.refused event (contention)
	}{
		{"claim without session", w1, ToolClaim, ClaimArgs{Item: f.item(4)}, govern.CodeInvalidRequest, false, false},
		{"claim without item", w1, ToolClaim, ClaimArgs{SessionID: "w1"}, govern.CodeInvalidRequest, false, false},
		{"claim item and next", w1, ToolClaim, ClaimArgs{SessionID: "w1", Item: f.item(4), Next: true}, govern.CodeInvalidRequest, false, false},
		{"claim without org and no Gitea", w1, ToolClaim, ClaimArgs{SessionID: "w1", Item: &ItemRef{Number: 4}}, govern.CodeInvalidRequest, false, false},
		{"claim next without Gitea", w1, ToolClaim, ClaimArgs{SessionID: "w1", Next: true}, "no_gitea", false, false},
		{"claim held item", w2, ToolClaim, ClaimArgs{SessionID: "w2", Item: f.item(3)}, govern.CodeClaimedByOther, true, true},
		{"claim with bad ttl", w2, ToolClaim, ClaimArgs{SessionID: "w2", Item: f.item(5), TTL: "soon"}, govern.CodeInvalidRequest, true, false},
		{"claim with bad role", w2, ToolClaim, ClaimArgs{SessionID: "w2", Item: f.item(5), Role: "pilot"}, govern.CodeInvalidRequest, true, false},
		{"session of another connection", w2, ToolMyLeases, SessionArgs{SessionID: "w1"}, govern.CodeNotOwner, false, false},
		{"heartbeat without fence", w1, ToolHeartbeat, FencedArgs{SessionID: "w1"}, govern.CodeInvalidRequest, false, false},
		{"heartbeat without expiry", w1, ToolHeartbeat, FencedArgs{SessionID: "w1", Fence: &Fence{LeaseID: cl.Fence.LeaseID}}, govern.CodeInvalidRequest, false, false},
		{"heartbeat generation without task session", w1, ToolHeartbeat, FencedArgs{SessionID: "w1",
			Fence: &Fence{LeaseID: cl.Fence.LeaseID, ExpiresAt: hb.Fence.ExpiresAt, LockGeneration: 2}}, govern.CodeInvalidRequest, false, false},
		{"heartbeat on a stale fence", w1, ToolHeartbeat, FencedArgs{SessionID: "w1", Fence: &stale}, govern.CodeFenceMoved, true, false},
		{"heartbeat another's lease", w2, ToolHeartbeat, FencedArgs{SessionID: "w2", Fence: hb.Fence}, govern.CodeNotOwner, true, false},
		{"heartbeat unknown lease", w2, ToolHeartbeat, FencedArgs{SessionID: "w2", Fence: &Fence{LeaseID: "lease-nope", ExpiresAt: "x"}}, govern.CodeNotFound, true, false},
		{"release on a stale fence", w1, ToolRelease, FencedArgs{SessionID: "w1", Fence: &stale}, govern.CodeFenceMoved, true, false},
		{"release another's lease", w2, ToolRelease, FencedArgs{SessionID: "w2", Fence: hb.Fence}, govern.CodeNotOwner, true, false},
		{"ask without Gitea", w1, ToolAsk, AskArgs{SessionID: "w1", Fence: hb.Fence, Question: "which?"}, govern.CodeSourceUnavailable, true, false},
		{"ask on a stale fence", w1, ToolAsk, AskArgs{SessionID: "w1", Fence: &stale, Question: "which?"}, govern.CodeFenceMoved, true, false},
		{"get_answer bad id", w1, ToolGetAnswer, GetAnswerArgs{SessionID: "w1", ClarificationID: "what"}, govern.CodeInvalidRequest, false, false},
		{"get_answer without Gitea", w1, ToolGetAnswer, GetAnswerArgs{SessionID: "w1", ClarificationID: "acme/widgets#3/ans-0123456789abcdef"}, "no_gitea", false, false},
		{"item_status without item", w1, ToolStatus, ItemArgs{SessionID: "w1"}, govern.CodeInvalidRequest, false, false},
		{"inspect without issue", w1, ToolInspect, InspectArgs{SessionID: "w1", Org: "acme", Repo: "widgets"}, govern.CodeInvalidRequest, false, false},
		{"seed heartbeat without token", w1, SeedHeartbeatLock, HeartbeatLockArgs{SessionID: "w1", IssueNumber: 3, Org: "acme", Repo: "widgets"}, govern.CodeInvalidRequest, false, false},
		{"seed heartbeat wrong token", w1, SeedHeartbeatLock, HeartbeatLockArgs{SessionID: "w1", IssueNumber: 3, Org: "acme", Repo: "widgets", TaskSessionID: "tsk-x"}, govern.CodeFenceMoved, true, false},
		{"seed heartbeat no lease", w2, SeedHeartbeatLock, HeartbeatLockArgs{SessionID: "w2", IssueNumber: 3, Org: "acme", Repo: "widgets", TaskSessionID: "tsk-x"}, govern.CodeNotFound, false, false},
		{"seed release another's", w2, SeedReleaseLease, ReleaseLeaseArgs{SessionID: "w2", LeaseID: cl.Fence.LeaseID}, govern.CodeNotOwner, true, false},
		{"seed allocate apply side-effect-free", w1, SeedAllocateNextWork, AllocateArgs{SessionID: "w1", Apply: true, SideEffectFree: true}, govern.CodeInvalidRequest, false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before, beforeAll, n := f.state(false), f.state(true), len(f.attempts())
			res, err := tc.c.SDK().CallTool(ctx, &sdk.CallToolParams{Name: tc.tool, Arguments: tc.args})
			if err != nil {
				t.Fatalf("protocol error instead of a result: %v", err)
			}
			var o struct {
				Success bool   `json:"success"`
				Code    string `json:"code"`
				Message string `json:"message"`
				Next    string `json:"next"`
			}
			b, _ := json.Marshal(res.StructuredContent)
			if err := json.Unmarshal(b, &o); err != nil || !res.IsError || o.Success || o.Code != tc.code || o.Message == "" || o.Next == "" {
				t.Fatalf("result isError=%v %s, want a structured refusal %s with message and next", res.IsError, b, tc.code)
			}
			if after := f.state(false); after != before && !tc.event {
				t.Fatalf("a refusal changed the workspace:\n%s\n%s", before, after)
			}
			if got := len(f.attempts()) - n; tc.audited && got != 1 || !tc.audited && (got != 0 || f.state(true) != beforeAll) {
				t.Fatalf("%d new audit attempts (audited %v)", got, tc.audited)
			}
		})
	}
	f.oneTerminal()
}

// TestSixteenClientsClaimOneItem: sixteen connections claim the same item at once: one
// lease, fifteen structured refusals, one terminal audit record per attempt.
func TestSixteenClientsClaimOneItem(t *testing.T) {
	f := newFx(t, fxOpt{})
	const n = 16
	clients := make([]*Client, n)
	for i := range clients {
		clients[i] = f.client("w" + string(rune('a'+i)))
	}
	outs := make([]Outcome, n)
	errs := make([]error, n)
	var start, wg sync.WaitGroup
	start.Add(1)
	for i, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			start.Wait()
			outs[i], errs[i] = c.Claim(context.Background(), ClaimArgs{Item: f.item(11)})
		}()
	}
	start.Done()
	wg.Wait()
	won, refused := 0, 0
	for i, o := range outs {
		switch {
		case errs[i] != nil:
			t.Fatalf("client %d: %v", i, errs[i])
		case o.Success:
			won++
		case o.Result == "refused" && (o.Code == govern.CodeClaimedByOther || o.Code == "busy") && o.Next != "":
			refused++
		default:
			t.Fatalf("client %d: %+v", i, o)
		}
	}
	if won != 1 || refused != n-1 {
		t.Fatalf("%d won, %d refused", won, refused)
	}
	atts := f.oneTerminal()
	if len(atts) != n {
		t.Fatalf("%d attempts recorded, want %d", len(atts), n)
	}
	r, err := f.srv.reads.activeLeases(context.Background())
	if err != nil || len(r) != 1 {
		t.Fatalf("active leases: %d %v", len(r), err)
	}
}

// TestSessionBinding: a session is bound to the connection that used it first; another
// connection naming it is refused not_owner until the first has ended and the session holds
// no lease.
func TestSessionBinding(t *testing.T) {
	f := newFx(t, fxOpt{})
	ctx := context.Background()
	a := f.client("w1")
	cl := must[Outcome](t)(a.Claim(ctx, ClaimArgs{Item: f.item(2)}))
	b := f.client("w1")
	if o := must[Outcome](t)(b.Heartbeat(ctx, *cl.Fence)); o.Success || o.Code != govern.CodeNotOwner || !strings.Contains(o.Message, "another connection") {
		t.Fatalf("heartbeat from a second connection: %+v", o)
	}
	a.Close()
	f.srv.bind.waitClosed(t)
	if o := must[Outcome](t)(b.Heartbeat(ctx, *cl.Fence)); o.Success || o.Code != govern.CodeNotOwner || !strings.Contains(o.Message, "still holds an active lease") {
		t.Fatalf("heartbeat after the first connection ended, lease held: %+v", o)
	}
	// Once the lease is gone the session may be taken up again.
	_, out, err := f.core.ForSession("w1").Run(ctx, govern.Request{Action: govern.ActionRelease, Target: govern.Target{LeaseID: cl.Fence.LeaseID, Session: "w1"}}, "")
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
