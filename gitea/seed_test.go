package gitea_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"steward/gitea"
	"steward/gitea/giteatest"
)

// TestSeedRepo makes a demo repository on a real Gitea: a new repository for the token's
// user, the missing labels, the issues with their labels; filling it again reuses the
// labels it has; a failure names its step and never the token.
func TestSeedRepo(t *testing.T) {
	srv := giteatest.Shared(t)
	ctx := context.Background()
	login := gitea.Login{URL: srv.URL, Token: gitea.NewToken(srv.AdminToken)}
	seed := gitea.Seed{NamePrefix: "seed-test-", Labels: map[string]string{"status:ready": "0e8a16", "area:ui": "1d76db"},
		Issues: []gitea.SeedIssue{{Title: "one", Body: "first", Labels: []string{"status:ready"}}, {Title: "two", Labels: []string{"status:ready", "area:ui"}}}}
	got, err := gitea.SeedRepo(ctx, login, seed)
	if err != nil {
		t.Fatal(err)
	}
	if got.Owner != srv.Admin || !strings.HasPrefix(got.Repo, "seed-test-") || len(got.Issues) != 2 {
		t.Fatalf("seeded %+v", got)
	}
	c, err := gitea.New(gitea.Config{Login: login, Owner: got.Owner, Repo: got.Repo})
	if err != nil {
		t.Fatal(err)
	}
	fact, h := c.IssueState(ctx, got.Issues[1])
	if !h.OK() || !fact.Found || fact.Issue.Title != "two" {
		t.Fatalf("issue #%d: %+v (%s)", got.Issues[1], fact, h.Reason)
	}
	ls := slices.Sorted(slices.Values(fact.Issue.Labels))
	if !slices.Equal(ls, []string{"area:ui", "status:ready"}) {
		t.Fatalf("labels %v", ls)
	}
	again, err := gitea.SeedRepo(ctx, login, gitea.Seed{Owner: got.Owner, Repo: got.Repo, Labels: seed.Labels,
		Issues: []gitea.SeedIssue{{Title: "three", Labels: []string{"area:ui"}}}})
	if err != nil || again.Repo != got.Repo || len(again.Issues) != 1 || again.Issues[0] == got.Issues[1] {
		t.Fatalf("filling the repository again: %+v, %v", again, err)
	}
	_, err = gitea.SeedRepo(ctx, login, gitea.Seed{Owner: got.Owner, Repo: "no-such-repo-here", Labels: seed.Labels})
	if err == nil || !strings.Contains(err.Error(), "list labels") || strings.Contains(err.Error(), srv.AdminToken) {
		t.Fatalf("seeding a missing repository: %v", err)
	}
	_, err = gitea.SeedRepo(ctx, login, gitea.Seed{Owner: got.Owner, Repo: got.Repo, Issues: []gitea.SeedIssue{{Title: "x", Labels: []string{"nope"}}}})
	if err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Fatalf("an issue naming an unknown label: %v", err)
	}
}
