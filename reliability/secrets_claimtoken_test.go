package reliability_test

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"steward/govern"
	"steward/govern/actionid"
	"steward/leases"
	"steward/mcp"
)

// TestClaimTokenNeverReachesAnOutput: the claim token is the secret that proves a worker's
// claim over MCP. A worker claims, heartbeats and releases through a real streamable HTTP
// server; another connection names its session and is refused with a forged token and with
// none; a request holding the token is previewed as JSON. The token goes back to the
// claiming connection alone, and reaches nothing else: no lock file (live or retired), no
// DB byte (only its SHA-256, which the lease row keeps), no audit record, no output of
// `steward audit`, `audit verify` or `status`, no refusal, no other connection's result,
// no printed preview.
func TestClaimTokenNeverReachesAnOutput(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	log, err := govern.OpenAudit(w.audit, nil)
	must(t, err)
	defer log.Close()
	core := govern.New(w.ws, log, govern.Options{Actor: govern.LocalActor(govern.RoleOperator, "mcp")})
	defer core.Close()
	srv := mcp.New(mcp.Config{Core: core, Version: "test"})
	defer srv.Close()
	l, err := mcp.ListenHTTP("127.0.0.1:0", "")
	must(t, err)
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.ServeHTTP(ctx, l) }()
	defer func() { stop(); <-served }()
	dial := func(session string) *mcp.Client {
		c, err := mcp.Connect(context.Background(), mcp.HTTPTransport(l.URL(), ""), session)
		must(t, err)
		t.Cleanup(func() { c.Close() })
		return c
	}

	var seen strings.Builder // everything the worker's own connection is not
	a := dial("tok-w1")
	cl, err := a.Claim(ctx, mcp.ClaimArgs{Item: &mcp.ItemRef{Org: "acme", Repo: "widgets", Number: 12}, Profile: "p", PID: int64(os.Getpid())})
	if err != nil || !cl.Success {
		t.Fatalf("claim: %+v %v", cl, err)
	}
	tok := cl.Fence.ClaimToken
	if !govern.ValidClaimToken(tok) {
		t.Fatalf("no claim token: %+v", cl.Fence)
	}
	hb, err := a.Heartbeat(ctx, *cl.Fence)
	if err != nil || !hb.Success {
		t.Fatalf("heartbeat: %+v %v", hb, err)
	}

	b := dial("tok-w1-squatter")
	for _, f := range []mcp.Fence{{LeaseID: hb.Fence.LeaseID, ExpiresAt: hb.Fence.ExpiresAt}, {LeaseID: hb.Fence.LeaseID, ExpiresAt: hb.Fence.ExpiresAt, ClaimToken: govern.NewClaimToken()}} {
		var o mcp.Outcome
		_, err := b.Call(ctx, mcp.ToolRelease, mcp.FencedArgs{SessionID: "tok-w1-squatter", Fence: &f}, &o)
		must(t, err)
		ob, _ := json.Marshal(o)
		seen.Write(ob)
	}
	other := dial("tok-w2")
	for _, tool := range []string{mcp.ToolMyLeases, mcp.ToolStatus} {
		var raw map[string]any
		args := any(mcp.SessionArgs{SessionID: "tok-w2"})
		if tool == mcp.ToolStatus {
			args = mcp.ItemArgs{SessionID: "tok-w2", Item: &mcp.ItemRef{Org: "acme", Repo: "widgets", Number: 12}}
		}
		_, err := other.Call(ctx, tool, args, &raw)
		must(t, err)
		rb, _ := json.Marshal(raw)
		seen.Write(rb)
	}
	wrong := *hb.Fence
	wrong.ClaimToken = govern.NewClaimToken()
	if o, err := a.Heartbeat(ctx, wrong); err != nil || o.Success || o.Code != govern.CodeNotOwner {
		t.Fatalf("heartbeat with a wrong token: %+v %v", o, err)
	} else {
		ob, _ := json.Marshal(o)
		seen.Write(ob)
	}
	pv, err := core.Preview(ctx, govern.Request{Action: actionid.Release, Target: govern.Target{LeaseID: hb.Fence.LeaseID, Session: "tok-w1"},
		Params: govern.OwnLeaseParams{OwnerProof: govern.OwnerProof{ClaimToken: tok}}})
	must(t, err)
	pb, _ := json.Marshal(pv)
	seen.Write(pb)
	if rel, err := a.Release(ctx, *hb.Fence); err != nil || !rel.Success {
		t.Fatalf("release: %+v %v", rel, err)
	}

	// The lease row keeps the token's hash, never the token.
	r, err := leases.OpenReader(w.ws.DBTarget())
	must(t, err)
	lease, ok, err := r.LeaseByID(ctx, cl.Fence.LeaseID)
	r.Close()
	if err != nil || !ok || govern.LeaseTokenHash(lease) != govern.ClaimTokenHash(tok) {
		t.Fatalf("the lease row does not keep the token's hash: %v %v %q", ok, err, govern.LeaseTokenHash(lease))
	}
	for _, root := range []string{w.ws.LocksDir, filepath.Dir(w.ws.DBPath), filepath.Dir(w.audit)} {
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				data, _ := os.ReadFile(p)
				seen.Write(data)
			}
			return nil
		})
	}
	for _, args := range [][]string{{"audit"}, {"audit", "--json"}, {"audit", "verify", "--as-role", "operator"}, {"status", "--json", "--no-gitea"}, {"status", "--no-gitea"}} {
		_, o, e := steward(t, append(args, w.flags()...)...)
		seen.WriteString(o + e)
	}
	if strings.Contains(seen.String(), tok) {
		t.Fatal("the claim token reached an output other than its own connection")
	}
	if !strings.Contains(seen.String(), "[redacted]") || !strings.Contains(seen.String(), "not_owner") {
		t.Fatal("the refusals and the redacted preview were not seen: the test proves nothing")
	}
}
