package govern

import (
	"context"
	"strconv"
	"testing"

	"steward/govern/actionid"
)

// TestVerifyClaimUnderTheRemoteItWasMadeOn: a claim's verifier looks its lease up under the
// remote the claim was made on — the one it named, or the default ("origin") when it named
// none, as the claim itself did (actions_claim.go:531).
func TestVerifyClaimUnderTheRemoteItWasMadeOn(t *testing.T) {
	for _, remote := range []string{"", "origin", "upstream"} {
		t.Run("remote "+strconv.Quote(remote), func(t *testing.T) {
			f := newFixture(t, RoleOperator)
			it := item(7)
			it.Remote = remote
			_, out, err := f.core.Run(context.Background(), Request{Action: actionid.Claim,
				Target: Target{Item: it, Session: "s1"}, Params: ClaimParams{Role: "author", Username: "bot"}}, "")
			if err != nil || out.Result != ResultSucceeded {
				t.Fatalf("claim: %+v %v", out, err)
			}
			var intent Record
			for _, r := range f.records() {
				if r.Attempt == out.Attempt && r.Kind == KindIntent {
					intent = r
				}
			}
			if intent.Target.Item == nil || intent.Target.Item.Remote != remote {
				t.Fatalf("the intent names item %+v, want the remote as asked, %q", intent.Target.Item, remote)
			}
			res, ev, ok := claimAction{}.verify(context.Background(), f.core, intent)
			if !ok || res != ResultSucceeded {
				t.Fatalf("verify: %s %v %v, want succeeded", res, ev, ok)
			}
		})
	}
}
