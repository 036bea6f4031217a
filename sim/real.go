package sim

import (
	"context"
	"fmt"

	"steward/gitea"
)

// seedReal fills a repository on a real Gitea with the demo's labels and issues (fixture
// set-up, as the in-process seeding is) through gitea's seeding API. Without Owner/Repo
// it creates a fresh repository for the token's user. Workers open no pull requests there.
func (d *Demo) seedReal(ctx context.Context, issues []SeedIssue) error {
	o := d.opts
	d.GiteaURL, d.token = o.GiteaURL, o.GiteaToken
	s := gitea.Seed{Owner: o.Owner, Repo: o.Repo, Labels: labels}
	for _, is := range issues {
		s.Issues = append(s.Issues, gitea.SeedIssue(is))
	}
	got, err := gitea.SeedRepo(ctx, gitea.Login{URL: o.GiteaURL, Token: gitea.NewToken(o.GiteaToken)}, s)
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	d.Owner, d.Repo = got.Owner, got.Repo
	d.Backlog = append(d.Backlog, got.Issues...)
	return nil
}
