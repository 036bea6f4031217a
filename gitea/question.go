package gitea

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"steward/gitea/gitearec"
)

// ClarificationOptions tunes Clarifications.
type ClarificationOptions struct {
	// Claimant returns the login that holds the claim on an item ("" if none known). When it
	// returns a login, that login's latest comment is the question.
	Claimant func(number int64) string
}

// timelineEvent is the part of Gitea's timeline entry steward reads. Gitea sends "label" as an
// object; SDK v0.25.1 declares it a list and cannot decode label events, hence our own type.
type timelineEvent struct {
	ID   int64  `json:"id"`
	Type string `json:"type"`
	Body string `json:"body"`
	User *struct {
		Login string `json:"login"`
	} `json:"user"`
	Created time.Time `json:"created_at"`
	Label   *struct {
		Name string `json:"name"`
	} `json:"label"`
}

func (e timelineEvent) login() string {
	if e.User == nil {
		return ""
	}
	return e.User.Login
}

// Clarifications lists open issues and pull requests carrying any marker label, each with its
// question. The question is chosen by the Rule* constants in order: the claimant's latest
// comment (when a claimant is given and has commented), else the last comment before the
// marker label was last added (from the issue timeline), else (no label event) the last comment,
// else the issue body (an item filed already marked asks in its body). A failure to
// read one item's timeline keeps the item (with no question) and makes the health partial.
func (c *Client) Clarifications(ctx context.Context, o ClarificationOptions) ([]gitearec.Clarification, Health) {
	items, h := c.openWithLabels(ctx, "clarifications", c.cfg.MarkerLabels)
	if h.State == HealthUnavailable {
		return nil, h
	}
	out := make([]gitearec.Clarification, 0, len(items))
	for _, it := range items {
		cl := gitearec.Clarification{Issue: it, Rule: gitearec.RuleNone}
		for _, m := range c.cfg.MarkerLabels {
			if it.HasLabel(m) {
				cl.Marker = m
				break
			}
		}
		claimant := ""
		if o.Claimant != nil {
			claimant = o.Claimant(it.Number)
		}
		evs, err := c.timeline(ctx, it.Number)
		if err != nil {
			h = worse(h, c.healthFail(HealthPartial, fmt.Sprintf("question of #%d", it.Number), err))
		} else {
			chooseQuestion(&cl, evs, c.cfg.MarkerLabels, claimant)
		}
		out = append(out, cl)
	}
	return out, h
}

func (c *Client) timeline(ctx context.Context, number int64) ([]timelineEvent, error) {
	var all []timelineEvent
	path := fmt.Sprintf("/repos/%s/%s/issues/%d/timeline", url.PathEscape(c.cfg.Owner), url.PathEscape(c.cfg.Repo), number)
	for page := 1; page <= maxPages; page++ {
		var got []timelineEvent
		q := url.Values{"page": {strconv.Itoa(page)}, "limit": {strconv.Itoa(c.cfg.PageSize)}}
		if _, err := c.getJSON(ctx, fmt.Sprintf("timeline of #%d (page %d)", number, page), path, q, &got); err != nil {
			return all, err
		}
		all = append(all, got...)
		if len(got) < c.cfg.PageSize {
			break
		}
	}
	return all, nil
}

// chooseQuestion applies the rules to a timeline (ordered oldest first; ids grow with time).
func chooseQuestion(cl *gitearec.Clarification, evs []timelineEvent, markers []string, claimant string) {
	var label *timelineEvent
	for i := range evs {
		e := &evs[i]
		if e.Type == "label" && e.Body == "1" && e.Label != nil && contains(markers, e.Label.Name) {
			if label == nil || e.ID > label.ID {
				label = e
			}
		}
	}
	if label != nil {
		t := label.Created
		cl.LabeledAt, cl.LabeledBy, cl.LabelEventID = &t, label.login(), label.ID
	}
	// An answer steward posted (its trailing marker says so) is never the question: when the
	// marker comes back without a new comment (an undo, a worker re-adding it), the question
	// is still the one that was answered.
	pick := func(ok func(e timelineEvent) bool) *timelineEvent {
		var best *timelineEvent
		for i := range evs {
			if e := &evs[i]; e.Type == "comment" && !isAnswer(e.Body) && ok(*e) && (best == nil || e.ID > best.ID) {
				best = e
			}
		}
		return best
	}
	var q *timelineEvent
	if claimant != "" {
		if q = pick(func(e timelineEvent) bool { return strings.EqualFold(e.login(), claimant) }); q != nil {
			cl.Rule = gitearec.RuleClaimant
		}
	}
	if q == nil && label != nil {
		if q = pick(func(e timelineEvent) bool { return e.ID < label.ID }); q != nil {
			cl.Rule = gitearec.RuleBeforeLabel
		}
	}
	if q == nil && label == nil {
		if q = pick(func(timelineEvent) bool { return true }); q != nil {
			cl.Rule = gitearec.RuleLastComment
		}
	}
	if q == nil && cl.Body != "" {
		cl.Question, cl.AskedBy, cl.AskedAt, cl.Rule = cl.Body, cl.Author, cl.CreatedAt, gitearec.RuleIssueBody
		if label != nil {
			cl.AskedAt = label.Created
		}
		return
	}
	if q == nil {
		if label != nil {
			cl.AskedAt, cl.AskedBy = label.Created, label.login()
		}
		return
	}
	cl.Question, cl.QuestionCommentID, cl.AskedBy, cl.AskedAt = q.Body, q.ID, q.login(), q.Created
	if label != nil {
		cl.AskedAt = label.Created
	}
}

func isAnswer(body string) bool {
	m, ok := gitearec.TrailingMark(body)
	return ok && m.Kind == "answer"
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
