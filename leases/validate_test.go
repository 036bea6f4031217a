package leases_test

import (
	"context"
	"crypto/sha256"
	"os"
	"strings"
	"testing"

	"steward/leases"
	"steward/leases/leaserec"
)

// TestClaimRefusesEachMissingPart: a claim request that lacks one part of what a lease
// needs is refused invalid_request, naming the part, and the DB's bytes do not change; the
// smallest request of each kind that is whole is a lease. Each row removes one part, so a
// check of the request that let any one of them through fails here.
func TestClaimRefusesEachMissingPart(t *testing.T) {
	t.Parallel()
	path, s := newStore(t, leases.StoreOptions{})
	ctx := context.Background()
	for _, c := range []struct {
		name string
		edit func(*leases.ClaimRequest)
		says string
	}{
		{"no session", func(r *leases.ClaimRequest) { r.Session.SessionID = "" }, "session id"},
		{"no remote", func(r *leases.ClaimRequest) { r.Work.Remote = "" }, "remote/org/repo"},
		{"no org", func(r *leases.ClaimRequest) { r.Work.Org = "" }, "remote/org/repo"},
		{"no repo", func(r *leases.ClaimRequest) { r.Work.Repo = "" }, "remote/org/repo"},
		{"no kind", func(r *leases.ClaimRequest) { r.Work.Kind = "" }, "work kind"},
		{"another kind", func(r *leases.ClaimRequest) { r.Work.Kind = "discussion" }, "work kind"},
		{"number zero", func(r *leases.ClaimRequest) { r.Work.Number = 0 }, "work number"},
		{"number below zero", func(r *leases.ClaimRequest) { r.Work.Number = -3 }, "work number"},
	} {
		req := claimReq("sess-v", 5)
		c.edit(&req)
		before := fileHash(t, path)
		out, err := s.Claim(ctx, req, now)
		if err != nil || out.Code != leases.CodeInvalidRequest || !strings.Contains(out.Message, c.says) {
			t.Errorf("%s: %+v %v, want invalid_request naming %q", c.name, out, err, c.says)
		}
		if fileHash(t, path) != before {
			t.Errorf("%s: the refused claim changed the DB file", c.name)
		}
	}
	for i, kind := range []leaserec.WorkKind{leaserec.KindIssue, leaserec.KindPR} {
		req := claimReq("sess-v", 1)
		req.Work.Kind = kind
		req.Session.SessionID = []string{"sess-issue", "sess-pr"}[i]
		if out, err := s.Claim(ctx, req, now); err != nil || !out.OK() {
			t.Errorf("a whole %s claim of number 1: %+v %v", kind, out, err)
		}
	}
}

func fileHash(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}
