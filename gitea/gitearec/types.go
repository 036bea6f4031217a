package gitearec

import "time"

// DefaultMarkerLabels are the labels that mark an item blocked pending clarification.
var DefaultMarkerLabels = []string{"status:blocked-pending-clarification"}

// DefaultBlockedLabel routes an item to needs_controller.
const DefaultBlockedLabel = "status:blocked"

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
