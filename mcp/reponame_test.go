package mcp

import (
	"context"
	"strings"
	"testing"

	"steward/govern"
)

// TestRepoSpellingsOverMCP: the claim tool writes one spelling per repository — a second
// worker's claim of acme/Widgets.git#7 after acme/widgets#7 is refused
// claimed_by_other_session — and refuses a spelling Gitea would not accept before the core
// is asked: invalid_request naming the reason, nothing written, not even an audit record.
//
// Before the rule the second claim got a second lease and lock for the issue, and each
// refused spelling was claimed as an item of its own.
func TestRepoSpellingsOverMCP(t *testing.T) {
	f := newFx(t, fxOpt{clientPID: 4242})
	ctx := context.Background()
	a, b := f.client("w1"), f.client("w2")
	if o := must[Outcome](t)(a.Claim(ctx, ClaimArgs{Item: &ItemRef{Org: "acme", Repo: "widgets", Number: 7}})); !o.Success {
		t.Fatalf("claim: %+v", o)
	}
	o := must[Outcome](t)(b.Claim(ctx, ClaimArgs{Item: &ItemRef{Org: "acme", Repo: "Widgets.git", Number: 7}}))
	if o.Success || o.Code != govern.CodeClaimedByOther {
		t.Fatalf("claim of acme/Widgets.git#7 by another worker: %+v", o)
	}
	for _, tc := range []struct{ org, repo, want string }{
		{"acme", "./widgets", "it is a path"},
		{"acme", "widgets/", "it is a path"},
		{"acme", "ｗｉｄｇｅｔｓ", "full-width characters"},
		{"acme.", "widgets", `owner name "acme."`},
	} {
		before, n := f.state(true), len(f.attempts())
		o := must[Outcome](t)(b.Claim(ctx, ClaimArgs{Item: &ItemRef{Org: tc.org, Repo: tc.repo, Number: 8}}))
		if o.Success || o.Code != govern.CodeInvalidRequest || !strings.Contains(o.Message, tc.want) || o.Fence != nil {
			t.Errorf("claim of %s/%s: %+v; want invalid_request saying %q", tc.org, tc.repo, o, tc.want)
		}
		if after := f.state(true); after != before || len(f.attempts()) != n {
			t.Errorf("the refused claim of %s/%s wrote", tc.org, tc.repo)
		}
	}
}
