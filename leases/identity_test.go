package leases_test

import (
	"context"
	"testing"

	"steward/leases"
	"steward/leases/leaserec"
)

// TestItemIdentityIsCaseInsensitive: Gitea owner and repository
// names are case-insensitive, so acme/widgets#60 and ACME/Widgets#60 are one item. Before
// the fix they were two work_items rows and the second claim was granted a second lease.
func TestItemIdentityIsCaseInsensitive(t *testing.T) {
	path, s := newStore(t, leases.StoreOptions{})
	first := claimReq("s1", 60)
	first.Work.Org, first.Work.Repo = "acme", "widgets"
	l := mustClaimReq(t, s, first)
	second := claimReq("s2", 60)
	second.Work.Org, second.Work.Repo = "ACME", " Widgets"
	out, err := s.Claim(context.Background(), second, now)
	if err != nil || out.Code != leases.CodeClaimedByOtherSession || out.HolderSessionID != "s1" {
		t.Fatalf("claim of ACME/Widgets#60 while acme/widgets#60 is held: %+v %v", out, err)
	}
	r, err := leases.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, w := range []leaserec.WorkRef{first.Work, second.Work} {
		ls, err := r.LeasesForWorkItem(context.Background(), w)
		if err != nil || len(ls) != 1 || ls[0].LeaseID != l.LeaseID {
			t.Errorf("leases of %s/%s#%d: %+v %v", w.Org, w.Repo, w.Number, ls, err)
		}
		if h, err := r.LeaseHistory(context.Background(), w); err != nil || len(h) != 1 {
			t.Errorf("history of %s/%s#%d: %d leases %v", w.Org, w.Repo, w.Number, len(h), err)
		}
	}
}

func mustClaimReq(t *testing.T, s leases.Store, req leases.ClaimRequest) *leaserec.Lease {
	t.Helper()
	out, err := s.Claim(context.Background(), req, now)
	if err != nil || !out.OK() {
		t.Fatalf("claim: %+v %v", out, err)
	}
	return out.Lease
}
