package gitea

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"time"

	sdk "code.gitea.io/sdk/gitea"
)

// Seed is a demo's set-up on a Gitea server: a repository with labels and issues for
// simulated workers to claim. It is fixture creation for `steward demo --gitea-url` (and
// tests), not an action on a supervised repository: nothing the governed core does goes
// through it, and the arch test lets only the demo's simulator call SeedRepo.
type Seed struct {
	// Owner and Repo name an existing repository to fill. When either is empty a new
	// repository, NamePrefix plus a random suffix, is made for the token's user.
	Owner, Repo string
	NamePrefix  string // default "steward-demo-"
	// Labels are created when the repository lacks them: name → colour ("d93f0b").
	Labels map[string]string
	Issues []SeedIssue
	// Timeout bounds each request (default defaultRequestTimeout).
	Timeout time.Duration
}

// SeedIssue is one issue to open, with the names of its labels (each must be in
// Seed.Labels or already in the repository).
type SeedIssue struct {
	Title, Body string
	Labels      []string
}

// Seeded says what SeedRepo made: the repository and the numbers of the issues, in the
// order of Seed.Issues.
type Seeded struct {
	Owner, Repo string
	Issues      []int64
}

// SeedRepo fills a repository on the Gitea at login.URL as login's user. An error names
// the step that failed and never holds the token; what was made before it stays.
func SeedRepo(ctx context.Context, login Login, s Seed) (Seeded, error) {
	if login.Token.IsZero() {
		return Seeded{}, errors.New("gitea: seed: login has no token")
	}
	if s.Timeout <= 0 {
		s.Timeout = defaultRequestTimeout
	}
	if s.NamePrefix == "" {
		s.NamePrefix = "steward-demo-"
	}
	c, err := sdk.NewClient(login.URL, sdk.SetToken(login.Token.value), sdk.SetContext(ctx),
		sdk.SetHTTPClient(&http.Client{Timeout: s.Timeout}), sdk.SetGiteaVersion(""), sdk.SetUserAgent("steward"))
	if err != nil {
		return Seeded{}, seedErr("connect", err, login.Token)
	}
	out := Seeded{Owner: s.Owner, Repo: s.Repo}
	if out.Owner == "" || out.Repo == "" {
		me, _, err := c.GetMyUserInfo()
		if err != nil {
			return out, seedErr("who am I", err, login.Token)
		}
		var b [4]byte
		_, _ = rand.Read(b[:])
		r, _, err := c.CreateRepo(
			sdk.CreateRepoOption{Name: s.NamePrefix + hex.EncodeToString(b[:]), AutoInit: true, DefaultBranch: "main"},
		)
		if err != nil {
			return out, seedErr("create repository", err, login.Token)
		}
		out.Owner, out.Repo = me.UserName, r.Name
	}
	ids := map[string]int64{}
	for page := 1; ; page++ {
		have, _, err := c.ListRepoLabels(
			out.Owner,
			out.Repo,
			sdk.ListLabelsOptions{ListOptions: sdk.ListOptions{Page: page, PageSize: defaultPageSize}},
		)
		if err != nil {
			return out, seedErr("list labels", err, login.Token)
		}
		for _, l := range have {
			ids[l.Name] = l.ID
		}
		if len(have) < defaultPageSize {
			break
		}
	}
	for name, color := range s.Labels {
		if _, ok := ids[name]; ok {
			continue
		}
		l, _, err := c.CreateLabel(out.Owner, out.Repo, sdk.CreateLabelOption{Name: name, Color: "#" + color})
		if err != nil {
			return out, seedErr("create label "+name, err, login.Token)
		}
		ids[name] = l.ID
	}
	for _, is := range s.Issues {
		var ls []int64
		for _, n := range is.Labels {
			id, ok := ids[n]
			if !ok {
				return out, fmt.Errorf(
					"gitea: seed: issue %q names label %q, which neither the seed nor the repository has",
					is.Title,
					n,
				)
			}
			ls = append(ls, id)
		}
		made, _, err := c.CreateIssue(out.Owner, out.Repo, sdk.CreateIssueOption{Title: is.Title, Body: is.Body, Labels: ls})
		if err != nil {
			return out, seedErr("create issue", err, login.Token)
		}
		out.Issues = append(out.Issues, made.Index)
	}
	return out, nil
}

func seedErr(step string, err error, tok Token) error {
	return fmt.Errorf("gitea: seed: %s: %s", step, scrub(err.Error(), tok))
}
