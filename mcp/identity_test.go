package mcp

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"steward/govern"
)

// connect opens a connection to srv acting as session.
func connect(t *testing.T, srv *Server, session string) *Client {
	t.Helper()
	st, ct := sdk.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := srv.SDK().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Connect(ctx, ct, session)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(); ss.Close() })
	return c
}

// another is a second server on the fixture's workspace: another steward mcp, or the same
// one after a restart (it knows no connection of the first).
func (f *fx) another(clientPID int64) *Server {
	s := New(Config{Core: f.core, ClientPID: clientPID, Version: "test"})
	f.t.Cleanup(func() { s.Close() })
	return s
}

// TestClaimTokenIsTheProof: over a transport that proves no process (HTTP), the claim
// token is what proves a claim — on the server that minted it, on another one, after a
// restart. A connection that cannot prove the claim is shown no fence and no token, and its
// heartbeat is refused not_owner; presenting the token (to heartbeat, or to my_leases) proves
// it, and the connection is shown its fence again.
func TestClaimTokenIsTheProof(t *testing.T) {
	f := newFx(t, fxOpt{})
	ctx := context.Background()
	a := f.client("w1")
	cl := must[Outcome](t)(a.Claim(ctx, ClaimArgs{Item: f.item(5), PID: int64(os.Getpid())}))
	tok := cl.Fence.ClaimToken
	if !cl.Success || !govern.ValidClaimToken(tok) {
		t.Fatalf("claim: %+v", cl)
	}
	if m := must[MyLeases](t)(a.MyLeases(ctx)); len(m.Leases) != 1 || m.Leases[0].Fence == nil || *m.Leases[0].Fence != *cl.Fence {
		t.Fatalf("my_leases of the claiming connection: %+v (want %+v)", m, cl.Fence)
	}

	// Another server (or this one restarted): the session's name proves nothing.
	b := connect(t, f.another(0), "w1")
	raw := rawResult(t, b, ToolMyLeases, SessionArgs{SessionID: "w1"})
	var m MyLeases
	_ = json.Unmarshal([]byte(raw), &m)
	if len(m.Leases) != 1 || m.Leases[0].Fence != nil || !m.Leases[0].Yours || m.Leases[0].Note == "" || strings.Contains(raw, tok) {
		t.Fatalf("my_leases of an unproven connection: %s", raw)
	}
	bare := *cl.Fence
	bare.ClaimToken = ""
	n := len(f.attempts())
	if o := must[Outcome](t)(b.Heartbeat(ctx, bare)); o.Success || o.Code != govern.CodeNotOwner || strings.Contains(o.Message+o.Next, tok) {
		t.Fatalf("heartbeat without the token: %+v", o)
	}
	if len(f.attempts()) != n+1 {
		t.Fatal("the core did not record the refused heartbeat")
	}
	wrong := bare
	wrong.ClaimToken = govern.NewClaimToken()
	if o := must[Outcome](t)(b.Release(ctx, wrong)); o.Success || o.Code != govern.CodeNotOwner {
		t.Fatalf("release with a wrong token: %+v", o)
	}
	hb := must[Outcome](t)(b.Heartbeat(ctx, *cl.Fence))
	if !hb.Success || hb.Fence.ClaimToken != tok {
		t.Fatalf("heartbeat with the token on another server: %+v", hb)
	}
	if m := must[MyLeases](t)(b.MyLeases(ctx)); len(m.Leases) != 1 || m.Leases[0].Fence == nil || *m.Leases[0].Fence != *hb.Fence {
		t.Fatalf("my_leases after proving the claim: %+v (want %+v)", m, hb.Fence)
	}

	// A third: the token presented to my_leases proves the claim and shows its fence.
	c := connect(t, f.another(0), "w1")
	var wrongly MyLeases
	if _, err := c.Call(ctx, ToolMyLeases, SessionArgs{SessionID: "w1", ClaimToken: govern.NewClaimToken()}, &wrongly); err != nil || wrongly.Leases[0].Fence != nil {
		t.Fatalf("my_leases with a wrong token: %+v %v", wrongly, err)
	}
	var proven MyLeases
	if _, err := c.Call(ctx, ToolMyLeases, SessionArgs{SessionID: "w1", ClaimToken: tok}, &proven); err != nil || proven.Leases[0].Fence == nil || *proven.Leases[0].Fence != *hb.Fence {
		t.Fatalf("my_leases with the token: %+v %v", proven, err)
	}
	if o := must[Outcome](t)(c.Release(ctx, *hb.Fence)); !o.Success {
		t.Fatalf("release with the token: %+v", o)
	}
	f.oneTerminal()
}

// TestStdioProvesByProcess: over stdio the process that started steward mcp is the
// worker, as the operating system says, and it proves the claims it made on this host
// without the token — a worker written before claim tokens keeps working, also through a
// restarted steward mcp — while the token alone never lets another process act on them.
func TestStdioProvesByProcess(t *testing.T) {
	self := int64(os.Getpid())
	f := newFx(t, fxOpt{clientPID: self})
	ctx := context.Background()
	a := f.client("w1")
	cl := must[Outcome](t)(a.Claim(ctx, ClaimArgs{Item: f.item(6)}))
	if !cl.Success || !govern.ValidClaimToken(cl.Fence.ClaimToken) {
		t.Fatalf("claim: %+v", cl)
	}
	old := *cl.Fence // a worker that does not know the token
	old.ClaimToken = ""
	hb := must[Outcome](t)(a.Heartbeat(ctx, old))
	if !hb.Success {
		t.Fatalf("heartbeat from the claiming process, no token: %+v", hb)
	}
	restarted := connect(t, f.another(self), "w1")
	m := must[MyLeases](t)(restarted.MyLeases(ctx))
	if len(m.Leases) != 1 || m.Leases[0].Fence == nil || m.Leases[0].Fence.ClaimToken != "" {
		t.Fatalf("my_leases after a restart, same process: %+v (want the fence, without the token it does not hold)", m)
	}
	if o := must[Outcome](t)(restarted.Heartbeat(ctx, *m.Leases[0].Fence)); !o.Success {
		t.Fatalf("heartbeat after a restart, same process, no token: %+v", o)
	}
	other := connect(t, f.another(7373), "w1")
	if o := must[MyLeases](t)(other.MyLeases(ctx)); len(o.Leases) != 1 || o.Leases[0].Fence != nil {
		t.Fatalf("my_leases from another process: %+v", o)
	}
	ml := must[MyLeases](t)(a.MyLeases(ctx))
	withTok := *ml.Leases[0].Fence
	if withTok.ClaimToken != cl.Fence.ClaimToken {
		t.Fatalf("the claiming connection lost its token: %+v", withTok)
	}
	if o := must[Outcome](t)(other.Release(ctx, withTok)); o.Success || o.Code != govern.CodeNotOwner || !strings.Contains(o.Message, "process") {
		t.Fatalf("release from another process with the token: %+v", o)
	}
	if o := must[Outcome](t)(a.Release(ctx, withTok)); !o.Success {
		t.Fatalf("release: %+v", o)
	}
}

// rawResult calls a tool and returns its structured result as JSON text.
func rawResult(t *testing.T, c *Client, tool string, args any) string {
	t.Helper()
	res, err := c.SDK().CallTool(context.Background(), &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res.StructuredContent)
	return string(b)
}
