package gitea

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	sdk "code.gitea.io/sdk/gitea"
)

// Mark is the hidden idempotency marker steward ends every comment it posts with:
//
//	<!-- steward:<kind> id=<id>[ q=<question>][ round=<round>][ attempt=<attempt>] -->
//
// Kind is "answer" or "ask"; ID is stable for one answer to one question (so a retry finds
// the comment an earlier attempt posted); Question and Round bind an answer to the question
// comment and to the marker label's addition it answers; Attempt names the audit attempt
// that posted it. Characters outside [A-Za-z0-9._:-] in a value become "_", so a marker
// never closes the HTML comment early.
type Mark struct {
	Kind, ID, Question, Round, Attempt string
}

// String renders the marker.
func (m Mark) String() string {
	var b strings.Builder
	b.WriteString("<!-- steward:" + cleanMarkValue(m.Kind) + " id=" + cleanMarkValue(m.ID))
	for _, f := range [][2]string{{"q", m.Question}, {"round", m.Round}, {"attempt", m.Attempt}} {
		if f[1] != "" {
			b.WriteString(" " + f[0] + "=" + cleanMarkValue(f[1]))
		}
	}
	b.WriteString(" -->")
	return b.String()
}

func cleanMarkValue(v string) string {
	clean := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == ':', r == '-':
			return r
		}
		return '_'
	}, v)
	return strings.ReplaceAll(clean, "--", "-_")
}

// TrailingMark parses the marker a comment body ends with: its last non-blank line must be
// exactly a marker steward writes (WithMarker puts it there). A marker anywhere else in a
// body — quoted, or inside a question a worker wrote — is not one.
func TrailingMark(body string) (Mark, bool) {
	body = strings.TrimRight(body, " \t\r\n")
	last := body[strings.LastIndexByte(body, '\n')+1:]
	inner, ok := strings.CutPrefix(strings.TrimSpace(last), "<!-- steward:")
	if !ok {
		return Mark{}, false
	}
	inner, ok = strings.CutSuffix(inner, " -->")
	if !ok {
		return Mark{}, false
	}
	fields := strings.Split(inner, " ")
	m := Mark{Kind: fields[0]}
	if m.Kind == "" || cleanMarkValue(m.Kind) != m.Kind {
		return Mark{}, false
	}
	for _, f := range fields[1:] {
		k, v, ok := strings.Cut(f, "=")
		if !ok || v == "" || cleanMarkValue(v) != v {
			return Mark{}, false
		}
		switch k {
		case "id":
			m.ID = v
		case "q":
			m.Question = v
		case "round":
			m.Round = v
		case "attempt":
			m.Attempt = v
		default:
			return Mark{}, false
		}
	}
	if m.ID == "" {
		return Mark{}, false
	}
	return m, true
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

// Thread reads an issue or pull request and its timeline. A missing item is an
// *HTTPError with Status 404 (see IsNotFound).
func (c *Client) Thread(ctx context.Context, number int64) (Thread, error) {
	is, err := c.GetIssue(ctx, number)
	if err != nil {
		return Thread{}, err
	}
	evs, err := c.timeline(ctx, number)
	if err != nil {
		return Thread{}, err
	}
	th := Thread{Issue: is, Clarification: Clarification{Issue: is, Rule: RuleNone}}
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
			th.Comments = append(th.Comments, Comment{ID: e.ID, Author: e.login(), Body: e.Body, CreatedAt: e.Created})
		case e.Type == "label" && e.Label != nil:
			th.Labels = append(th.Labels, LabelEvent{ID: e.ID, Label: e.Label.Name, Added: e.Body == "1", By: e.login(), At: e.Created})
		}
	}
	return th, nil
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
