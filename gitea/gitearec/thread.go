package gitearec

import (
	"strings"
	"time"
)

// Question rules, in Clarification.Rule: which rule chose the question.
const (
	RuleClaimant    = "claimant"     // latest comment by the given claimant login
	RuleBeforeLabel = "before-label" // last comment made before the marker label was last added
	RuleLastComment = "last-comment" // no label event found: the last comment on the item
	RuleIssueBody   = "issue-body"   // no comment before the label (e.g. filed already marked): the body
	RuleNone        = "none"         // the item has no comment to show
)

// Clarification is an open item carrying a clarification marker label, with its question.
type Clarification struct {
	Issue
	Marker            string     // the marker label found
	Question          string     // comment body, Markdown
	QuestionCommentID int64      // 0 when no question was found
	Rule              string     // which rule chose the question (Rule* constants)
	AskedBy           string     // author of the question comment
	AskedAt           time.Time  // label time when known, else the comment time
	LabeledAt         *time.Time // when the marker was last added, when the timeline says
	LabeledBy         string     // who last added the marker, when the timeline says
	LabelEventID      int64      // the timeline event that last added the marker (0 when unknown)
}

// LabelEvent is one addition or removal of a label on an item (the timeline's label
// entries). IDs grow with time, shared with the item's comments.
type LabelEvent struct {
	ID    int64
	Label string
	Added bool
	By    string
	At    time.Time
}

// Thread is one item read back whole: the item, its clarification question (the rules of
// Clarifications, without a claimant), its comments and its label events, oldest first.
type Thread struct {
	Issue         Issue
	Clarification Clarification
	Comments      []Comment
	Labels        []LabelEvent
}

// FindOwnMark returns the first comment authored by author (compared case-insensitively,
// as Gitea compares logins) whose trailing marker is of kind with the given id. Only such
// comments are evidence of what steward posted: anyone can write a marker's text.
func (th Thread) FindOwnMark(author, kind, id string) (Comment, Mark, bool) {
	if author == "" {
		return Comment{}, Mark{}, false
	}
	for _, cm := range th.Comments {
		if !strings.EqualFold(cm.Author, author) {
			continue
		}
		if m, ok := TrailingMark(cm.Body); ok && m.Kind == kind && m.ID == id {
			return cm, m, true
		}
	}
	return Comment{}, Mark{}, false
}
