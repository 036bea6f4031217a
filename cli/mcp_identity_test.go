package cli

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"steward/govern"
	"steward/locks"
	"steward/mcp"
	"steward/mcp/mcptest"
)

// twoServerWorkspace is one workspace served by two real `steward mcp --http` processes:
// on SQLite, or on PostgreSQL (the test binary's server), the lock directory shared.
type twoServerWorkspace struct {
	env   mcptest.Env
	bin   string
	flags []string
}

func newTwoServerWorkspace(t *testing.T, backend string) twoServerWorkspace {
	t.Helper()
	w := newMCPWorkspace(t)
	bin := realSteward(t)
	if backend == "postgres" {
		url, _ := initPG(t)
		w.ws.DBPath = url
		for i, f := range w.flags {
			if f == "--db" {
				w.flags[i+1] = url
			}
		}
	}
	return twoServerWorkspace{env: w.env(nil), bin: bin, flags: w.flags}
}

// serve starts one `steward mcp --http` on the workspace.
func (w twoServerWorkspace) serve(t *testing.T) (string, *exec.Cmd) {
	t.Helper()
	return serveHTTP(t, w.bin, cleanEnv(t), w.flags...)
}

func dialHTTP(t *testing.T, url, session string) *mcp.Client {
	t.Helper()
	c, err := mcp.Connect(context.Background(), mcp.HTTPTransport(url, ""), session)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// rawCall calls a tool and returns its structured result as JSON text.
func rawCall(t *testing.T, c *mcp.Client, tool string, args any) string {
	t.Helper()
	res, err := c.SDK().CallTool(context.Background(), &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res.StructuredContent)
	return string(b)
}

// TestMCPHTTPClaimIsOnlyItsClaimants is the defect as it was found: on two `steward mcp
// --http` servers of one workspace, worker A claims on server 1 with its live pid; client
// B, on server 2, names A's session — my_leases handed it A's full fence, and its release
// succeeded: the live worker's lease ended and its lock went to retired/ (over HTTP a
// connection has no pid until it claims, the core skipped the process check without one,
// and the session binding lived in one server's memory). Now every claim is bound to a
// secret claim token whose hash the lease row keeps: B is shown no fence and no token, and
// its heartbeat, release (by fence, by the seed's lease id, with a made-up token) and ask are
// refused not_owner, leaving the lease and lock untouched. The proof is durable: A's token
// works on the other server and after a restart, and a call without it is refused there
// too. On SQLite and on PostgreSQL.
func TestMCPHTTPClaimIsOnlyItsClaimants(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			w := newTwoServerWorkspace(t, backend)
			ctx := context.Background()
			url1, srv1 := w.serve(t)
			url2, _ := w.serve(t)
			a := dialHTTP(t, url1, "worker-a")
			cl, err := a.Claim(ctx, mcp.ClaimArgs{Item: w.env.Item(4), PID: int64(os.Getpid())})
			if err != nil || !cl.Success || cl.Fence == nil {
				t.Fatalf("A's claim: %+v %v", cl, err)
			}
			tok := cl.Fence.ClaimToken
			if !govern.ValidClaimToken(tok) {
				t.Fatalf("the claim returned no claim token: %+v", cl.Fence)
			}

			b := dialHTTP(t, url2, "worker-a")
			ml := rawCall(t, b, mcp.ToolMyLeases, mcp.SessionArgs{SessionID: "worker-a"})
			var got mcp.MyLeases
			_ = json.Unmarshal([]byte(ml), &got)
			if !got.Success || len(got.Leases) != 1 || got.Leases[0].Fence != nil || got.Leases[0].Note == "" || strings.Contains(ml, tok) || strings.Contains(ml, cl.Fence.TaskSessionID) {
				t.Fatalf("my_leases on another server for A's session: %s (want the lease without its fence or token)", ml)
			}
			lockName := cl.Fence.LockFile
			bare := *cl.Fence // what B can learn (inspect_lock_contract shows the lock's task session)
			bare.ClaimToken = ""
			forged := bare
			forged.ClaimToken = govern.NewClaimToken()
			before := w.env.State(t, false)
			for _, call := range []struct {
				name, tool string
				args       any
			}{
				{"release by fence", mcp.ToolRelease, mcp.FencedArgs{SessionID: "worker-a", Fence: &bare}},
				{"heartbeat by fence", mcp.ToolHeartbeat, mcp.FencedArgs{SessionID: "worker-a", Fence: &bare}},
				{"release with a made-up token", mcp.ToolRelease, mcp.FencedArgs{SessionID: "worker-a", Fence: &forged}},
				{"seed release by lease id", mcp.SeedReleaseLease, mcp.ReleaseLeaseArgs{SessionID: "worker-a", LeaseID: bare.LeaseID}},
				{"seed heartbeat by task session", mcp.SeedHeartbeatLock, mcp.HeartbeatLockArgs{SessionID: "worker-a", IssueNumber: 4, Org: w.env.Org, Repo: w.env.Repo, TaskSessionID: bare.TaskSessionID}},
				{"ask", mcp.ToolAsk, mcp.AskArgs{SessionID: "worker-a", Fence: &bare, Question: "mine now?"}},
			} {
				var o mcp.Outcome
				if _, err := b.Call(ctx, call.tool, call.args, &o); err != nil {
					t.Fatal(err)
				}
				if o.Success || o.Code != govern.CodeNotOwner {
					t.Fatalf("%s from a connection that never claimed: %+v", call.name, o)
				}
			}
			if after := w.env.State(t, false); after != before {
				t.Fatalf("a refused call changed the workspace:\n%s\n%s", before, after)
			}
			if n := w.env.ActiveLeases(t, 4); n != 1 {
				t.Fatalf("%d active leases on the item, want A's", n)
			}
			if e := locks.ReadFile(w.env.LocksDir, lockName); e.Missing || e.Record.LeaseID != cl.Fence.LeaseID {
				t.Fatalf("A's lock is gone: %+v", e)
			}

			// The proof is the lease row's, so it holds on whichever server: on a third one,
			// the fence alone is refused and the fence with A's token renews the claim.
			url3, _ := w.serve(t)
			c3 := dialHTTP(t, url3, "worker-a")
			if o, err := c3.Heartbeat(ctx, bare); err != nil || o.Success || o.Code != govern.CodeNotOwner {
				t.Fatalf("heartbeat without the token on a third server: %+v %v", o, err)
			}
			hb, err := c3.Heartbeat(ctx, *cl.Fence)
			if err != nil || !hb.Success || hb.Fence.ClaimToken != tok {
				t.Fatalf("A's heartbeat with its token on a third server: %+v %v", hb, err)
			}

			// A restart of server 1 forgets every connection; the proof is the lease row's.
			_ = srv1.Process.Signal(syscall.SIGTERM)
			_ = srv1.Wait()
			url1, _ = w.serve(t)
			again := dialHTTP(t, url1, "worker-a")
			noTok := *hb.Fence
			noTok.ClaimToken = ""
			if o, err := again.Release(ctx, noTok); err != nil || o.Success || o.Code != govern.CodeNotOwner {
				t.Fatalf("release without the token after a restart: %+v %v", o, err)
			}
			if m := must2[mcp.MyLeases](t)(again.MyLeases(ctx)); len(m.Leases) != 1 || m.Leases[0].Fence != nil {
				t.Fatalf("my_leases after a restart, no token: %+v", m)
			}
			var proven mcp.MyLeases
			if _, err := again.Call(ctx, mcp.ToolMyLeases, mcp.SessionArgs{SessionID: "worker-a", ClaimToken: tok}, &proven); err != nil ||
				len(proven.Leases) != 1 || proven.Leases[0].Fence == nil || *proven.Leases[0].Fence != *hb.Fence {
				t.Fatalf("my_leases with the token after a restart: %+v %v (want %+v)", proven, err, hb.Fence)
			}
			if o, err := again.Release(ctx, *hb.Fence); err != nil || !o.Success {
				t.Fatalf("A's release with its token after a restart: %+v %v", o, err)
			}
			if e := locks.ReadFile(w.env.LocksDir, lockName); !e.Missing {
				t.Fatal("the released lock is still live")
			}
			w.env.OneTerminal(t)
		})
	}
}

func must2[T any](t *testing.T) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}
