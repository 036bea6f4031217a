package govern

import (
	"context"
	"strings"
	"testing"

	"steward/govern/actionid"
)

// TestRecoverNamesAnItem: item.recover needs an item with org, repo and a number above 0;
// number 0 names none and is refused invalid_request before anything is read.
func TestRecoverNamesAnItem(t *testing.T) {
	f := newFixture(t, RoleOperator)
	for _, it := range []*Item{nil, {Org: "acme", Repo: "widgets", Kind: "issue", Number: 0},
		{Org: "", Repo: "widgets", Kind: "issue", Number: 4}, {Org: "acme", Repo: "", Kind: "issue", Number: 4}} {
		pv, err := f.core.Preview(context.Background(), Request{Action: actionid.Recover, Target: Target{Item: it}})
		if err != nil || pv.Allowed || pv.Refusal == nil || pv.Refusal.Code != CodeInvalidRequest ||
			!strings.Contains(pv.Refusal.Message, "--item") {
			t.Errorf("recover of %+v: %+v %v, want refused invalid_request asking for the item", it, pv.Refusal, err)
		}
	}
}
