package mcp

import (
	"context"
	"strings"
	"testing"

	"steward/govern"
	"steward/locks"
)

// TestOversizedClaimWritesNothing is the defect as found over MCP: a claim with a 600 KB
// profile succeeded and wrote a 1.2 MB lock steward itself could not read (unreadable-lock,
// the first heartbeat refused fence_moved, the file outliving the release, every later claim
// refused). It is refused too_large by the core's preview now, through steward's own name
// and the seed's, with nothing written but the refusal's audit record; the item stays
// claimable and its lock readable.
func TestOversizedClaimWritesNothing(t *testing.T) {
	f := newFx(t, fxOpt{clientPID: 4242})
	ctx := context.Background()
	c := f.client("w1")
	huge := strings.Repeat("p", 600<<10)
	for _, call := range []struct {
		tool string
		args any
	}{
		{ToolClaim, ClaimArgs{SessionID: "w1", Item: f.item(3), Profile: huge}},
		{SeedLockIssue, LockIssueArgs{SessionID: "w1", IssueNumber: 3, Org: "acme", Repo: "widgets", ProfileName: huge}},
		{ToolClaim, ClaimArgs{SessionID: "w1", Item: f.item(3), Worktree: huge}},
	} {
		before, n := f.state(false), len(f.attempts())
		var o Outcome
		if _, err := c.Call(ctx, call.tool, call.args, &o); err != nil {
			t.Fatal(err)
		}
		if o.Success || o.Code != govern.CodeTooLarge || !strings.Contains(o.Message, "at most") || o.Next == "" || o.Fence != nil {
			t.Fatalf("%s: %+v", call.tool, o)
		}
		if after := f.state(false); after != before {
			t.Fatalf("%s: the refused claim wrote:\n%s\n%s", call.tool, before, after)
		}
		if atts := f.oneTerminal(); len(atts) != n+1 || atts[n].Status() != govern.ResultRefused {
			t.Fatalf("%s: %d attempts, want the refusal recorded once", call.tool, len(atts)-n)
		}
	}
	cl := must[Outcome](t)(c.Claim(ctx, ClaimArgs{Item: f.item(3), Profile: "worker"}))
	if !cl.Success {
		t.Fatalf("the item is not claimable after the refusals: %+v", cl)
	}
	if e := locks.ReadFile(f.ws.LocksDir, cl.Fence.LockFile); e.Missing || e.Unreadable != nil {
		t.Fatalf("lock: missing %v unreadable %+v", e.Missing, e.Unreadable)
	}
	if hb := must[Outcome](t)(c.Heartbeat(ctx, *cl.Fence)); !hb.Success {
		t.Fatalf("heartbeat: %+v", hb)
	}
}
