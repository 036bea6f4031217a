package live

import (
	"context"
	"testing"

	"steward/gitea"
	"steward/gitea/gitearec"
	"steward/model"
)

// stateOnly answers IssueState for every number, closed; the other reads are empty.
type stateOnly struct{ asked []int64 }

func (g *stateOnly) Clarifications(context.Context, gitea.ClarificationOptions) ([]gitearec.Clarification, gitea.Health) {
	return nil, gitea.Health{State: gitea.HealthOK}
}
func (g *stateOnly) Blocked(context.Context) ([]gitearec.Issue, gitea.Health) {
	return nil, gitea.Health{State: gitea.HealthOK}
}
func (g *stateOnly) OpenPullRequests(context.Context) ([]gitearec.PullRequest, gitea.Health) {
	return nil, gitea.Health{State: gitea.HealthOK}
}
func (g *stateOnly) OpenIssues(context.Context) ([]gitearec.Issue, gitea.Health) {
	return nil, gitea.Health{State: gitea.HealthOK}
}
func (g *stateOnly) IssueState(_ context.Context, n int64) (gitea.IssueFact, gitea.Health) {
	g.asked = append(g.asked, n)
	return gitea.IssueFact{Found: true, Issue: gitearec.Issue{Number: n, State: "closed", Kind: "issue"}}, gitea.Health{State: gitea.HealthOK}
}

// TestLoadGiteaProbesEverySpelling: a claimed item of the configured repository written in
// another case is the repository's item, so its state is read from Gitea; another
// repository's is not.
func TestLoadGiteaProbesEverySpelling(t *testing.T) {
	g := &stateOnly{}
	cfg := model.Config{Org: "acme", Repo: "widgets"}
	claimed := []model.Item{
		{Kind: "issue", Number: 7, Org: "ACME", Repo: "Widgets"},
		{Kind: "issue", Number: 8, Org: "acme", Repo: "gadgets"},
	}
	_, _, h := LoadGitea(context.Background(), g, cfg, claimed, now)
	if h.Status != model.StatusOK {
		t.Fatalf("health %+v", h)
	}
	if len(g.asked) != 1 || g.asked[0] != 7 {
		t.Errorf("issue states read: %v; want [7] (ACME/Widgets#7 is acme/widgets#7, acme/gadgets#8 another repository)", g.asked)
	}
}
