package gitea

import (
	"time"

	sdk "code.gitea.io/sdk/gitea"
)

// Kind says whether an item is an issue or a pull request.
type Kind string

// Item kinds.
const (
	KindIssue Kind = "issue"
	KindPR    Kind = "pr"
)

// Issue is an issue or pull request as the issues API shows it.
type Issue struct {
	Number    int64
	Kind      Kind
	Title     string
	Body      string // Markdown
	URL       string // html URL
	State     string // "open" or "closed"
	Labels    []string
	Author    string
	CreatedAt time.Time
	UpdatedAt time.Time
	ClosedAt  *time.Time
}

// HasLabel reports whether the item carries the label (exact name).
func (i Issue) HasLabel(name string) bool {
	for _, l := range i.Labels {
		if l == name {
			return true
		}
	}
	return false
}

// Comment is one issue or pull-request comment.
type Comment struct {
	ID        int64
	Author    string
	Body      string
	URL       string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// PullRequest holds the facts steward needs about a pull request.
type PullRequest struct {
	Number     int64
	Title      string
	URL        string
	State      string // "open" or "closed" (merged PRs are closed with Merged set)
	Merged     bool
	MergedAt   *time.Time
	HeadSHA    string
	HeadBranch string
	Base       string
	UpdatedAt  time.Time
}

func fromSDKIssue(i *sdk.Issue) Issue {
	out := Issue{Number: i.Index, Kind: KindIssue, Title: i.Title, Body: i.Body, URL: i.HTMLURL, State: string(i.State),
		CreatedAt: i.Created, UpdatedAt: i.Updated, ClosedAt: i.Closed}
	if i.PullRequest != nil {
		out.Kind = KindPR
	}
	if i.Poster != nil {
		out.Author = i.Poster.UserName
	}
	for _, l := range i.Labels {
		if l != nil {
			out.Labels = append(out.Labels, l.Name)
		}
	}
	return out
}

func fromSDKComment(c *sdk.Comment) Comment {
	out := Comment{ID: c.ID, Body: c.Body, URL: c.HTMLURL, CreatedAt: c.Created, UpdatedAt: c.Updated}
	if c.Poster != nil {
		out.Author = c.Poster.UserName
	}
	return out
}

func fromSDKPull(p *sdk.PullRequest) PullRequest {
	out := PullRequest{Number: p.Index, Title: p.Title, URL: p.HTMLURL, State: string(p.State),
		Merged: p.HasMerged, MergedAt: p.Merged}
	if p.Updated != nil {
		out.UpdatedAt = *p.Updated
	}
	if p.Head != nil {
		out.HeadSHA, out.HeadBranch = p.Head.Sha, p.Head.Ref
	}
	if p.Base != nil {
		out.Base = p.Base.Ref
	}
	return out
}
