package govern

import (
	"context"

	"steward/gitea"
	"steward/gitea/gitearec"
)

// GiteaSide is the part of Gitea the core reads and writes through for the clarification
// actions. *gitea.Client satisfies it; nothing else in steward writes to Gitea.
type GiteaSide interface {
	Repository() (owner, repo string)
	MarkerLabels() []string
	GetIssue(ctx context.Context, number int64) (gitearec.Issue, error)
	PullRequest(ctx context.Context, number int64) (gitea.PullRequestFact, gitea.Health)
	CreateComment(ctx context.Context, number int64, body string) (int64, error)
	AddLabels(ctx context.Context, number int64, names ...string) error
	RemoveLabel(ctx context.Context, number int64, name string) error
	FindCommentWithMarker(ctx context.Context, number int64, marker string) (bool, gitearec.Comment, error)
	// Self is the login steward's token belongs to: only comments it authored are evidence
	// of what steward posted.
	Self(ctx context.Context) (string, error)
	// Thread reads an item back whole: its question, comments and label events.
	Thread(ctx context.Context, number int64) (gitearec.Thread, error)
}

var _ GiteaSide = (*gitea.Client)(nil)
