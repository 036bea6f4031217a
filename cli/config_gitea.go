package cli

import (
	"context"
	"fmt"
	"time"

	"steward/config"
	"steward/gitea"
)

// checkGitea checks that the configured Gitea login resolves (a tea login by its name, or a
// URL with a token) and, unless offline, that the server accepts its token (GET /user,
// within 10 s). Nothing is checked when no Gitea is configured (config reports gitea-none).
// Messages never hold the token.
func checkGitea(ctx context.Context, r *config.Resolved, offline bool) []config.Problem {
	tea, url, tok := r.Get(config.KeyTeaLogin), r.Get(config.KeyGiteaURL), r.Get(config.KeyGiteaToken)
	owner, repo := r.Get(config.KeyGiteaOwner).Value, r.Get(config.KeyGiteaRepo).Value
	if tea.Invalid || url.Invalid || tok.Invalid || (tea.Value == "" && url.Value == "") {
		return nil
	}
	if url.Value != "" && tok.Value == "" {
		return nil // gitea-no-token says so
	}
	login, _, err := gitea.LoadLogin(gitea.LoginOptions{Name: tea.Value, URL: url.Value, Token: tok.Value})
	if err != nil {
		return []config.Problem{
			{
				Severity: config.SevError,
				Code:     "gitea-login",
				Message:  "the Gitea login does not resolve: " + login.Token.Scrub(err.Error()),
			},
		}
	}
	if offline || owner == "" || repo == "" {
		return nil
	}
	c, err := gitea.New(gitea.Config{Login: login, Owner: owner, Repo: repo, RequestTimeout: 10 * time.Second})
	if err != nil {
		return []config.Problem{{Severity: config.SevError, Code: "gitea-login", Message: login.Token.Scrub(err.Error())}}
	}
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := c.Self(ctx); err != nil {
		return []config.Problem{
			{
				Severity: config.SevError,
				Code:     "gitea-unreachable",
				Message: fmt.Sprintf(
					"Gitea at %s did not accept the login %s: %s (check the URL and the token; --offline skips this check)",
					login.URL,
					login.Name,
					login.Token.Scrub(err.Error()),
				),
			},
		}
	}
	return nil
}
