package gitea

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	sdk "code.gitea.io/sdk/gitea"
	"steward/gitea/gitearec"
)

// GetIssue reads one issue or pull request. A missing item is an *HTTPError with Status 404
// (see IsNotFound).
func (c *Client) GetIssue(ctx context.Context, number int64) (gitearec.Issue, error) {
	var it *sdk.Issue
	err := c.call(ctx, fmt.Sprintf("get issue #%d", number), func(s *sdk.Client) (*sdk.Response, error) {
		var resp *sdk.Response
		var err error
		it, resp, err = s.GetIssue(c.cfg.Owner, c.cfg.Repo, number)
		return resp, err
	})
	if err != nil {
		return gitearec.Issue{}, err
	}
	return fromSDKIssue(it), nil
}

// ListComments reads every comment of an issue or pull request, oldest first. Gitea ignores
// page and limit on this endpoint and returns all comments at once (with X-Total-Count), so
// this is one request; fewer comments than X-Total-Count is an error, never a short list.
func (c *Client) ListComments(ctx context.Context, number int64) ([]gitearec.Comment, error) {
	var cs []*sdk.Comment
	total := -1
	op := fmt.Sprintf("list comments of #%d", number)
	err := c.call(ctx, op, func(s *sdk.Client) (*sdk.Response, error) {
		var resp *sdk.Response
		var err error
		cs, resp, err = s.ListIssueComments(c.cfg.Owner, c.cfg.Repo, number,
			sdk.ListIssueCommentOptions{ListOptions: sdk.ListOptions{Page: -1}})
		if resp != nil && resp.Response != nil {
			if n, perr := strconv.Atoi(resp.Header.Get("X-Total-Count")); perr == nil {
				total = n
			}
		}
		return resp, err
	})
	if err != nil {
		return nil, err
	}
	if total > len(cs) {
		return nil, fmt.Errorf("gitea: %s: got %d of %d comments", op, len(cs), total)
	}
	out := make([]gitearec.Comment, 0, len(cs))
	for _, x := range cs {
		out = append(out, fromSDKComment(x))
	}
	return out, nil
}

// FindCommentWithMarker looks for the first comment whose body contains marker (e.g. an
// AnswerMarker), whoever wrote it. It is not evidence of what steward posted — anyone can
// write a marker's text; the governed core uses Thread.FindOwnMark.
func (c *Client) FindCommentWithMarker(ctx context.Context, number int64, marker string) (
	bool, gitearec.Comment, error) {
	cs, err := c.ListComments(ctx, number)
	if err != nil {
		return false, gitearec.Comment{}, err
	}
	for _, x := range cs {
		if strings.Contains(x.Body, marker) {
			return true, x, nil
		}
	}
	return false, gitearec.Comment{}, nil
}

// CreateComment posts a comment and returns its id. On ErrOutcomeUnknown the comment may
// exist: look for its marker before posting again.
func (c *Client) CreateComment(ctx context.Context, number int64, body string) (int64, error) {
	var cm *sdk.Comment
	err := c.call(ctx, fmt.Sprintf("create comment on #%d", number), func(s *sdk.Client) (*sdk.Response, error) {
		var resp *sdk.Response
		var err error
		cm, resp, err = s.CreateIssueComment(c.cfg.Owner, c.cfg.Repo, number, sdk.CreateIssueCommentOption{Body: body})
		return resp, err
	})
	if err != nil {
		return 0, err
	}
	return cm.ID, nil
}

// labelIDs resolves names to ids; a missing name is ErrLabelNotFound (nothing sent to the item).
func (c *Client) labelIDs(ctx context.Context, names []string) ([]int64, error) {
	known, err := c.repoLabels(ctx)
	if err != nil {
		return nil, &callError{op: "resolve labels", class: ErrNotSent, msg: "could not list labels: " + err.Error()}
	}
	ids := make([]int64, 0, len(names))
	for _, n := range names {
		id, ok := known[n]
		if !ok {
			return nil, fmt.Errorf("%w: %q", ErrLabelNotFound, n)
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// AddLabels adds existing repository labels to an issue or pull request. Adding a label the
// item already has is a no-op on the server.
func (c *Client) AddLabels(ctx context.Context, number int64, names ...string) error {
	ids, err := c.labelIDs(ctx, names)
	if err != nil {
		return err
	}
	return c.call(ctx, fmt.Sprintf("add labels to #%d", number), func(s *sdk.Client) (*sdk.Response, error) {
		_, resp, err := s.AddIssueLabels(c.cfg.Owner, c.cfg.Repo, number, sdk.IssueLabelsOption{Labels: ids})
		return resp, err
	})
}

// RemoveLabel removes one label from an issue or pull request.
func (c *Client) RemoveLabel(ctx context.Context, number int64, name string) error {
	ids, err := c.labelIDs(ctx, []string{name})
	if err != nil {
		return err
	}
	return c.call(ctx, fmt.Sprintf("remove label %s from #%d", name, number), func(s *sdk.Client) (*sdk.Response, error) {
		return s.DeleteIssueLabel(c.cfg.Owner, c.cfg.Repo, number, ids[0])
	})
}

// EnsureLabel returns the id of the repository label name, creating it with color (hex, e.g.
// "#d93f0b") when missing.
func (c *Client) EnsureLabel(ctx context.Context, name, color string) (int64, error) {
	known, err := c.repoLabels(ctx)
	if err != nil {
		return 0, err
	}
	if id, ok := known[name]; ok {
		return id, nil
	}
	var l *sdk.Label
	err = c.call(ctx, "create label "+name, func(s *sdk.Client) (*sdk.Response, error) {
		var resp *sdk.Response
		var err error
		l, resp, err = s.CreateLabel(c.cfg.Owner, c.cfg.Repo, sdk.CreateLabelOption{Name: name, Color: color})
		return resp, err
	})
	if err != nil {
		return 0, err
	}
	return l.ID, nil
}
