package gitea

import (
	"context"
	"fmt"
	"sort"

	sdk "code.gitea.io/sdk/gitea"
	"steward/gitea/gitearec"
)

// Version reads the server version; use it as a cheap probe of reachability and auth.
func (c *Client) Version(ctx context.Context) (string, Health) {
	var v string
	err := c.call(ctx, "server version", func(s *sdk.Client) (*sdk.Response, error) {
		var resp *sdk.Response
		var err error
		v, resp, err = s.ServerVersion()
		return resp, err
	})
	if err != nil {
		return "", c.healthFail(HealthUnavailable, "server version", err)
	}
	return v, c.healthOK()
}

// repoLabels lists the repository's labels by name.
func (c *Client) repoLabels(ctx context.Context) (map[string]int64, error) {
	ls, _, err := listAll(
		ctx,
		c,
		"list labels",
		func(s *sdk.Client, lo sdk.ListOptions) ([]*sdk.Label, *sdk.Response, error) {
			return s.ListRepoLabels(c.cfg.Owner, c.cfg.Repo, sdk.ListLabelsOptions{ListOptions: lo})
		},
	)
	if err != nil {
		return nil, err
	}
	out := make(map[string]int64, len(ls))
	for _, l := range ls {
		out[l.Name] = l.ID
	}
	return out, nil
}

// openWithLabels lists open issues and pull requests carrying any of labels. Gitea silently
// drops unknown label names from its filter (and would then list everything), so labels the
// repository lacks are skipped and every returned item is checked client-side.
func (c *Client) openWithLabels(ctx context.Context, what string, labels []string) ([]gitearec.Issue, Health) {
	known, err := c.repoLabels(ctx)
	if err != nil {
		return nil, c.healthFail(HealthUnavailable, what+": list labels", err)
	}
	var firstErr error
	var reasons string
	pagesRead := 0
	seen := map[int64]bool{}
	var out []gitearec.Issue
	for _, name := range labels {
		if _, ok := known[name]; !ok {
			continue
		}
		items, pages, err := listAll(ctx, c, "list issues labelled "+name,
			func(s *sdk.Client, lo sdk.ListOptions) ([]*sdk.Issue, *sdk.Response, error) {
				return s.ListRepoIssues(c.cfg.Owner, c.cfg.Repo, sdk.ListIssueOption{ListOptions: lo,
					State: sdk.StateOpen, Labels: []string{name}})
			})
		pagesRead += pages
		if err != nil {
			if firstErr == nil {
				firstErr = err
			} else {
				reasons += "; "
			}
			reasons += fmt.Sprintf("label %s (after %d pages read): %v", name, pages, err)
		}
		for _, si := range items {
			it := fromSDKIssue(si)
			if it.HasLabel(name) && it.State == "open" && !seen[it.Number] {
				seen[it.Number] = true
				out = append(out, it)
			}
		}
	}
	h := c.healthOK()
	if firstErr != nil {
		h = Health{State: HealthPartial, Reason: what + ": " + reasons, Err: firstErr, ReadAt: c.cfg.Now()}
		if pagesRead == 0 {
			h.State = HealthUnavailable
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Number < out[j].Number })
	return out, h
}

// Blocked lists open issues and pull requests carrying the blocked label (status:blocked by
// default), which route to needs_controller.
func (c *Client) Blocked(ctx context.Context) ([]gitearec.Issue, Health) {
	return c.openWithLabels(ctx, "blocked items", []string{c.cfg.BlockedLabel})
}

// IssueFact is the state of one issue or pull request; Found is false when the server said 404.
type IssueFact struct {
	Found bool
	gitearec.Issue
}

// IssueState reads one issue's (or pull request's) state, closed_at and labels.
func (c *Client) IssueState(ctx context.Context, number int64) (IssueFact, Health) {
	it, err := c.GetIssue(ctx, number)
	switch {
	case IsNotFound(err):
		return IssueFact{}, c.healthOK()
	case err != nil:
		return IssueFact{}, c.healthFail(HealthUnavailable, fmt.Sprintf("issue #%d", number), err)
	}
	return IssueFact{Found: true, Issue: it}, c.healthOK()
}

// PullRequestFact is the state of one pull request; Found is false when the server said 404.
type PullRequestFact struct {
	Found bool
	gitearec.PullRequest
}

// PullRequest reads one pull request's facts: state, merged flag and time, head SHA and branch,
// base, updated_at.
func (c *Client) PullRequest(ctx context.Context, number int64) (PullRequestFact, Health) {
	var p *sdk.PullRequest
	err := c.call(ctx, fmt.Sprintf("get pull request #%d", number), func(s *sdk.Client) (*sdk.Response, error) {
		var resp *sdk.Response
		var err error
		p, resp, err = s.GetPullRequest(c.cfg.Owner, c.cfg.Repo, number)
		return resp, err
	})
	switch {
	case IsNotFound(err):
		return PullRequestFact{}, c.healthOK()
	case err != nil:
		return PullRequestFact{}, c.healthFail(HealthUnavailable, fmt.Sprintf("pull request #%d", number), err)
	}
	return PullRequestFact{Found: true, PullRequest: fromSDKPull(p)}, c.healthOK()
}

// OpenPullRequests lists every open pull request with its updated_at (for stale-PR detection).
func (c *Client) OpenPullRequests(ctx context.Context) ([]gitearec.PullRequest, Health) {
	ps, pages, err := listAll(ctx, c, "list open pull requests",
		func(s *sdk.Client, lo sdk.ListOptions) ([]*sdk.PullRequest, *sdk.Response, error) {
			return s.ListRepoPullRequests(
				c.cfg.Owner,
				c.cfg.Repo,
				sdk.ListPullRequestsOptions{ListOptions: lo, State: sdk.StateOpen},
			)
		})
	out := make([]gitearec.PullRequest, 0, len(ps))
	seen := map[int64]bool{}
	for _, p := range ps {
		if pr := fromSDKPull(p); pr.State == "open" && !seen[pr.Number] {
			seen[pr.Number] = true
			out = append(out, pr)
		}
	}
	return out, c.readHealth("open pull requests", pages, err)
}

// OpenIssues lists every open issue (not pull request) with its title, body and labels: the
// backlog a worker chooses from. A listing cut short is partial, never a shorter backlog.
func (c *Client) OpenIssues(ctx context.Context) ([]gitearec.Issue, Health) {
	items, pages, err := listAll(ctx, c, "list open issues",
		func(s *sdk.Client, lo sdk.ListOptions) ([]*sdk.Issue, *sdk.Response, error) {
			return s.ListRepoIssues(
				c.cfg.Owner,
				c.cfg.Repo,
				sdk.ListIssueOption{ListOptions: lo, State: sdk.StateOpen, Type: sdk.IssueTypeIssue},
			)
		})
	out := make([]gitearec.Issue, 0, len(items))
	seen := map[int64]bool{}
	for _, si := range items {
		if it := fromSDKIssue(si); it.State == "open" && it.Kind != gitearec.KindPR && !seen[it.Number] {
			seen[it.Number] = true
			out = append(out, it)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Number < out[j].Number })
	return out, c.readHealth("open issues", pages, err)
}

// BranchExists reports whether the repository has the branch. A 404 is a definite "no".
func (c *Client) BranchExists(ctx context.Context, branch string) (bool, Health) {
	err := c.call(ctx, "get branch "+branch, func(s *sdk.Client) (*sdk.Response, error) {
		_, resp, err := s.GetRepoBranch(c.cfg.Owner, c.cfg.Repo, branch)
		return resp, err
	})
	switch {
	case err == nil:
		return true, c.healthOK()
	case IsNotFound(err):
		return false, c.healthOK()
	default:
		return false, c.healthFail(HealthUnavailable, "branch "+branch, err)
	}
}
