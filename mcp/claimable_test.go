package mcp

import (
	"context"
	"strings"
	"testing"

	"steward/alloc"
	"steward/gitea/gitearec"
	"steward/govern"
	"steward/leases"
	"steward/locks"
	"steward/locks/lockrec"
)

// TestClaimFollowsClaimable: one rule of what is claimable. Whatever item_status says is
// not claimable, an explicit claim refuses with the code item_status names (why_code) and
// writes nothing; whatever it says is claimable, the claim takes. In particular an item
// whose worker asked a maintainer is "awaiting clarification" for item_status and for claim
// alike. (It failed before: another session's explicit claim of the asked item succeeded.)
func TestClaimFollowsClaimable(t *testing.T) {
	f := newFx(t, fxOpt{gitea: true})
	ctx := context.Background()
	seed := f.real.Seed
	asked := seed.Issue(t, "Asked")
	blocked := seed.Issue(t, "Blocked", gitearec.DefaultBlockedLabel)
	closed := seed.Issue(t, "Closed")
	seed.Close(t, closed)
	free := seed.Issue(t, "Free")
	w1, w2 := f.client("w1"), f.client("w2")

	cl := must[Outcome](t)(w1.Claim(ctx, ClaimArgs{Item: &ItemRef{Number: asked}}))
	if !cl.Success {
		t.Fatalf("claim: %+v", cl)
	}
	if o := must[Outcome](t)(w1.Ask(ctx, *cl.Fence, "Which way?")); !o.Success {
		t.Fatalf("ask: %+v", o)
	}
	held := seed.Issue(t, "Held")
	if o := must[Outcome](t)(w1.Claim(ctx, ClaimArgs{Item: &ItemRef{Number: held}})); !o.Success {
		t.Fatalf("claim held: %+v", o)
	}

	for _, tc := range []struct {
		name string
		n    int64
		code string
	}{
		{"asked", asked, alloc.SkipAwaitingMaintainer},
		{"blocked", blocked, alloc.SkipBlocked},
		{"closed", closed, alloc.SkipClosed},
		{"no such issue", 99999, govern.CodeNotFound},
		{"held by another session", held, govern.CodeClaimedByOther},
		{"free", free, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := must[ItemStatus](t)(w2.ItemStatus(ctx, ItemRef{Number: tc.n}))
			if !st.Success || st.Claimable != (tc.code == "") || st.WhyCode != tc.code {
				t.Fatalf("item_status: claimable %v why_code %q (%s), want code %q", st.Claimable, st.WhyCode, st.Why, tc.code)
			}
			before := f.state(true)
			o := must[Outcome](t)(w2.Claim(ctx, ClaimArgs{Item: &ItemRef{Number: tc.n}}))
			if o.Success != st.Claimable {
				t.Fatalf("item_status says claimable %v (%s), claim says %+v", st.Claimable, st.Why, o)
			}
			if st.Claimable {
				return
			}
			if o.Code != st.WhyCode || tc.code != govern.CodeClaimedByOther && !strings.Contains(o.Message, st.Why) {
				t.Fatalf("claim refused %s %q; item_status said %s %q", o.Code, o.Message, st.WhyCode, st.Why)
			}
			if tc.code != govern.CodeClaimedByOther {
				// Refused before the core: nothing written, not even an audit record.
				if after := f.state(true); after != before {
					t.Fatalf("the refusal wrote:\n%s\n%s", before, after)
				}
			}
		})
	}
	f.oneTerminal()
}

// TestItemsNameTheWorkspacesRemote: an item a call names without a remote is the workspace's
// configured remote's (gitea.remote), not origin's — in the claim's lease and lock file, in
// item_status and inspect_lock_contract, in claim next and in get_answer. (It failed before:
// every default was origin, so a workspace whose workers name the remote prgs got lock
// files and leases no other tool of theirs would find.)
func TestItemsNameTheWorkspacesRemote(t *testing.T) {
	f := newFx(t, fxOpt{gitea: true, remote: "prgs"})
	ctx := context.Background()
	a := f.real.Seed.Issue(t, "Named")
	b := f.real.Seed.Issue(t, "Next")
	c := f.client("w1")
	cl := must[Outcome](t)(c.Claim(ctx, ClaimArgs{Item: &ItemRef{Number: a}}))
	if !cl.Success || cl.Item.Remote != "prgs" {
		t.Fatalf("claim: %+v", cl)
	}
	name, _ := locks.Name(lockrec.Key{Remote: "prgs", Org: f.real.Owner, Repo: f.real.Repo, Issue: a})
	if cl.Fence.LockFile != name {
		t.Fatalf("lock file %q, want %q", cl.Fence.LockFile, name)
	}
	r, err := leases.OpenReader(f.ws.DBTarget())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	l, ok, err := r.LeaseByID(ctx, cl.Fence.LeaseID)
	if err != nil || !ok || l.Work.Remote != "prgs" {
		t.Fatalf("lease %+v %v %v", l.Work, ok, err)
	}
	st := must[ItemStatus](t)(c.ItemStatus(ctx, ItemRef{Number: a}))
	if st.Item.Remote != "prgs" || st.Lock == nil || st.Lock.File != name || len(st.Leases) != 1 {
		t.Fatalf("item_status: %+v", st)
	}
	var ct Contract
	if _, err := c.Call(ctx, ToolInspect, InspectArgs{SessionID: "w1", IssueNumber: a}, &ct); err != nil || ct.LockFile != name || ct.Contract != string(lockrec.ContractCanonical) {
		t.Fatalf("inspect: %+v %v", ct, err)
	}
	nx := must[Outcome](t)(c.Claim(ctx, ClaimArgs{Next: true}))
	if !nx.Success || nx.Item.Number != b || nx.Item.Remote != "prgs" {
		t.Fatalf("claim next: %+v", nx)
	}
	ask := must[Outcome](t)(c.Ask(ctx, *nx.Fence, "Which?"))
	if !ask.Success {
		t.Fatalf("ask: %+v", ask)
	}
	ans := must[Answer](t)(c.GetAnswer(ctx, ask.ClarificationID))
	if !ans.Success || ans.Item.Remote != "prgs" {
		t.Fatalf("get_answer: %+v", ans)
	}
}
