package gitea

import (
	"context"
	"errors"
	"fmt"
	"sync"

	sdk "code.gitea.io/sdk/gitea"
	"steward/gitea/gitearec"
)

// Thread reads an issue or pull request and its timeline. A missing item is an
// *HTTPError with Status 404 (see IsNotFound).
func (c *Client) Thread(ctx context.Context, number int64) (gitearec.Thread, error) {
	is, err := c.GetIssue(ctx, number)
	if err != nil {
		return gitearec.Thread{}, err
	}
	evs, err := c.timeline(ctx, number)
	if err != nil {
		return gitearec.Thread{}, err
	}
	th := gitearec.Thread{Issue: is, Clarification: gitearec.Clarification{Issue: is, Rule: gitearec.RuleNone}}
	for _, m := range c.cfg.MarkerLabels {
		if is.HasLabel(m) {
			th.Clarification.Marker = m
			break
		}
	}
	chooseQuestion(&th.Clarification, evs, c.cfg.MarkerLabels, "")
	for _, e := range evs {
		switch {
		case e.Type == "comment":
			th.Comments = append(th.Comments, gitearec.Comment{ID: e.ID, Author: e.login(), Body: e.Body, CreatedAt: e.Created})
		case e.Type == "label" && e.Label != nil:
			th.Labels = append(
				th.Labels,
				gitearec.LabelEvent{ID: e.ID, Label: e.Label.Name, Added: e.Body == "1", By: e.login(), At: e.Created},
			)
		}
	}
	return th, nil
}

// selfLogin caches the login of the token's owner.
type selfLogin struct {
	mu    sync.Mutex
	login string
}

// Self returns the login of the user the client's token belongs to (GET /user), cached
// after the first success. A token that may not read its user (no read:user scope) falls
// back to the login's configured user (the tea login's "user"); with neither, the error.
func (c *Client) Self(ctx context.Context) (string, error) {
	c.self.mu.Lock()
	defer c.self.mu.Unlock()
	if c.self.login != "" {
		return c.self.login, nil
	}
	var u *sdk.User
	err := c.call(ctx, "read the token's user", func(s *sdk.Client) (*sdk.Response, error) {
		var resp *sdk.Response
		var err error
		u, resp, err = s.GetMyUserInfo()
		return resp, err
	})
	switch {
	case err == nil && u != nil && u.UserName != "":
		c.self.login = u.UserName
	case c.cfg.Login.User != "":
		c.self.login = c.cfg.Login.User
	case err == nil:
		return "", errors.New("gitea: the server named no user for the token")
	default:
		return "", fmt.Errorf("%w (give the login's user in the tea config, or a token that may read its user)", err)
	}
	return c.self.login, nil
}
