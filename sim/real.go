package sim

import (
	"context"
	"fmt"

	sdk "code.gitea.io/sdk/gitea"
)

// seedReal fills a repository on a real Gitea with the demo's labels and issues (fixture
// set-up, as the in-process seeding is). Without Owner/Repo it creates a fresh repository
// for the token's user. Workers open no pull requests there.
func (d *Demo) seedReal(ctx context.Context, issues []SeedIssue) error {
	o := d.opts
	d.GiteaURL, d.token = o.GiteaURL, o.GiteaToken
	c, err := sdk.NewClient(o.GiteaURL, sdk.SetToken(o.GiteaToken), sdk.SetContext(ctx))
	if err != nil {
		return fmt.Errorf("demo: gitea: %w", err)
	}
	d.Owner, d.Repo = o.Owner, o.Repo
	if d.Owner == "" || d.Repo == "" {
		me, _, err := c.GetMyUserInfo()
		if err != nil {
			return fmt.Errorf("demo: gitea: who am I: %w", err)
		}
		r, _, err := c.CreateRepo(sdk.CreateRepoOption{Name: "steward-demo-" + randomHex(4), AutoInit: true, DefaultBranch: "main"})
		if err != nil {
			return fmt.Errorf("demo: gitea: create repository: %w", err)
		}
		d.Owner, d.Repo = me.UserName, r.Name
	}
	ids := map[string]int64{}
	have, _, err := c.ListRepoLabels(d.Owner, d.Repo, sdk.ListLabelsOptions{ListOptions: sdk.ListOptions{Page: 1, PageSize: 50}})
	if err != nil {
		return fmt.Errorf("demo: gitea: list labels: %w", err)
	}
	for _, l := range have {
		ids[l.Name] = l.ID
	}
	for name, color := range Labels {
		if _, ok := ids[name]; ok {
			continue
		}
		l, _, err := c.CreateLabel(d.Owner, d.Repo, sdk.CreateLabelOption{Name: name, Color: "#" + color})
		if err != nil {
			return fmt.Errorf("demo: gitea: create label %s: %w", name, err)
		}
		ids[name] = l.ID
	}
	for _, s := range issues {
		var ls []int64
		for _, n := range s.Labels {
			ls = append(ls, ids[n])
		}
		is, _, err := c.CreateIssue(d.Owner, d.Repo, sdk.CreateIssueOption{Title: s.Title, Body: s.Body, Labels: ls})
		if err != nil {
			return fmt.Errorf("demo: gitea: create issue: %w", err)
		}
		d.Backlog = append(d.Backlog, is.Index)
	}
	return nil
}
