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

// TestRecoverNumbersItsSteps: a recover's preview numbers its steps from 1 in its effects,
// fences and evidence alike, so each line says which step it belongs to.
func TestRecoverNumbersItsSteps(t *testing.T) {
	f := newFixture(t, RoleOperator)
	f.deadClaim(51)
	pv, err := f.core.Preview(context.Background(), Request{Action: actionid.Recover, Target: Target{Item: item(51)}})
	if err != nil || !pv.Allowed {
		t.Fatalf("preview: %+v %v", pv.Refusal, err)
	}
	for what, lines := range map[string][]string{"fences": pv.Fences, "evidence": pv.Evidence} {
		seen := map[string]bool{}
		for _, l := range lines {
			if !strings.HasPrefix(l, "step 1: ") && !strings.HasPrefix(l, "step 2: ") {
				t.Errorf("%s line %q names no step 1 or 2", what, l)
			}
			seen[l[:6]] = true
		}
		if !seen["step 1"] || !seen["step 2"] {
			t.Errorf("%s %q: want lines of step 1 and step 2", what, lines)
		}
	}
}
