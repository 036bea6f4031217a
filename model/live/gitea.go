package live

import (
	"context"
	"time"

	"steward/gitea"
	"steward/gitea/gitearec"
	"steward/model"
)

// GiteaFacts is the part of the Gitea client the model reads (*gitea.Client
// satisfies it). Every call reports its Health; a failed read is never an
// empty inventory.
type GiteaFacts interface {
	Clarifications(ctx context.Context, o gitea.ClarificationOptions) ([]gitearec.Clarification, gitea.Health)
	Blocked(ctx context.Context) ([]gitearec.Issue, gitea.Health)
	OpenPullRequests(ctx context.Context) ([]gitearec.PullRequest, gitea.Health)
	OpenIssues(ctx context.Context) ([]gitearec.Issue, gitea.Health)
	IssueState(ctx context.Context, number int64) (gitea.IssueFact, gitea.Health)
}

var _ GiteaFacts = (*gitea.Client)(nil)

type giteaResult struct {
	facts  []model.GiteaFact
	clars  []gitearec.Clarification
	health model.SourceHealth
}

// maxIssueProbes bounds how many claimed items one Gitea poll asks about.
const maxIssueProbes = 200

// LoadGitea reads the Gitea facts the model uses: every open issue and open pull request
// (paged: each is an item of items[], in one bucket), clarification items, status:blocked
// items, and the state of each claimed item in claimed (at most maxIssueProbes), which
// finds the closed and merged ones. cfg names the repository; a fact names cfg.Remote,
// or no remote when it is empty (the model files it, model.Config.Remote). A listing cut
// short keeps what it read and makes the source partial, saying after how many pages.
func LoadGitea(
	ctx context.Context,
	g GiteaFacts,
	cfg model.Config,
	claimed []model.Item,
	now time.Time,
) ([]model.GiteaFact, []gitearec.Clarification, model.SourceHealth) {
	cfg = cfg.WithDefaults()
	t0 := time.Now()
	facts := map[model.Item]*model.GiteaFact{}
	var order []model.Item
	put := func(kind string, n int64) *model.GiteaFact {
		it := model.Item{Kind: kind, Number: n, Remote: cfg.Remote, Org: cfg.Org, Repo: cfg.Repo}
		f := facts[it]
		if f == nil {
			f = &model.GiteaFact{Item: it, Found: true}
			facts[it] = f
			order = append(order, it)
		}
		return f
	}
	var hs []gitea.Health
	fromIssue := func(is gitearec.Issue) {
		kind := string(is.Kind)
		if kind == "" {
			kind = "issue"
		}
		f := put(kind, is.Number)
		f.Title, f.State, f.URL, f.UpdatedAt = is.Title, is.State, is.URL, is.UpdatedAt
		f.Labels = appendUnique(f.Labels, is.Labels...)
	}
	open, h := g.OpenIssues(ctx)
	hs = append(hs, h)
	for _, is := range open {
		fromIssue(is)
	}
	clars, h := g.Clarifications(ctx, gitea.ClarificationOptions{})
	hs = append(hs, h)
	for _, c := range clars {
		fromIssue(c.Issue)
	}
	blocked, h := g.Blocked(ctx)
	hs = append(hs, h)
	for _, is := range blocked {
		fromIssue(is)
	}
	prs, h := g.OpenPullRequests(ctx)
	hs = append(hs, h)
	for _, p := range prs {
		f := put("pr", p.Number)
		f.Title, f.State, f.Merged, f.URL = p.Title, p.State, p.Merged, p.URL
		f.UpdatedAt, f.HeadBranch = p.UpdatedAt, p.HeadBranch
	}
	for i, it := range claimed {
		if i >= maxIssueProbes {
			break
		}
		if !it.InRepo(cfg.Org, cfg.Repo) {
			continue
		}
		fact, h := g.IssueState(ctx, it.Number)
		hs = append(hs, h)
		if !h.OK() {
			continue
		}
		if !fact.Found {
			f := put(it.Kind, it.Number)
			f.Found = false
			continue
		}
		fromIssue(fact.Issue)
	}
	out := make([]model.GiteaFact, 0, len(order))
	for _, k := range order {
		out = append(out, *facts[k])
	}
	sh := model.SourceHealth{Status: model.StatusOK, ScannedAt: now, ScanDuration: time.Since(t0)}
	for _, h := range hs {
		switch h.State {
		case gitea.HealthUnavailable:
			sh.Status, sh.Partial = model.StatusUnavailable, false
			sh.Reason = h.Reason
		case gitea.HealthPartial:
			if sh.Status == model.StatusOK {
				sh.Status, sh.Partial, sh.Reason = model.StatusDegraded, true, h.Reason
			}
		}
		if sh.Status == model.StatusUnavailable {
			break
		}
	}
	if sh.Status == model.StatusUnavailable && len(out) > 0 {
		sh.Status, sh.Partial = model.StatusDegraded, true
	}
	return out, clars, sh
}

func appendUnique(s []string, xs ...string) []string {
	for _, x := range xs {
		dup := false
		for _, y := range s {
			dup = dup || y == x
		}
		if !dup {
			s = append(s, x)
		}
	}
	return s
}

func (l *Model) pollGitea(ctx context.Context) {
	defer l.wg.Done()
	t := time.NewTicker(l.opt.GiteaEvery)
	defer t.Stop()
	for {
		var claimed []model.Item
		if s := l.Current(); s != nil {
			for _, c := range s.Claims {
				if c.Item != nil {
					claimed = append(claimed, *c.Item)
				}
			}
		}
		facts, clars, h := LoadGitea(ctx, l.opt.Gitea, l.opt.Config, claimed, l.now())
		select {
		case l.giteaCh <- giteaResult{facts, clars, h}:
		case <-ctx.Done():
			return
		}
		select {
		case <-t.C:
		case <-ctx.Done():
			return
		}
	}
}
