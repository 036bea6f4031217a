package cli

import (
	"fmt"
	"io"
	"strings"

	"steward/gitea"
	"steward/govern"
)

// giteaFlags are the global flags that select a Gitea repository. The token comes from
// $STEWARD_GITEA_TOKEN or the tea CLI's config, never from the command line.
type giteaFlags struct {
	url, login, repo string
}

// giteaClient returns the configured client, or nil when no repository is configured.
// Warnings (a token file others can read, TLS checks off) go to warn.
func (g *globals) giteaClient(warn io.Writer) (*gitea.Client, error) {
	if g.gitea.repo == "" {
		return nil, nil
	}
	owner, repo, ok := strings.Cut(g.gitea.repo, "/")
	if !ok || owner == "" || repo == "" {
		return nil, fmt.Errorf("--gitea-repo must be owner/name, got %q", g.gitea.repo)
	}
	login, warns, err := gitea.LoadLogin(gitea.LoginOptions{Name: g.gitea.login, URL: g.gitea.url, Token: g.giteaToken})
	if err != nil {
		return nil, err
	}
	for _, w := range warns {
		fmt.Fprintf(warn, "warning: %s: %s\n", w.Code, w.Message)
	}
	g.secrets().AddScrubber(login.Token.Scrub)
	return gitea.New(gitea.Config{Login: login, Owner: owner, Repo: repo})
}

// clarificationCommands are the CLI faces of the clarification actions.
func clarificationCommands() []actionCmd {
	return []actionCmd{
		{path: []string{"answer"}, action: govern.ActionAnswer, short: "Answer a clarification: comment with the answer, then remove the marker label",
			flags: append([]flagSpec{{name: "body", usage: "the answer (Markdown)", required: true}}, itemFlags...)},
		{path: []string{"ask"}, action: govern.ActionAsk, worker: true, short: "Ask for clarification on a claimed item, then release it (worker action)",
			flags: ownLeaseFlags(flagSpec{name: "lease", target: "lease", usage: "the worker's lease id", required: true},
				flagSpec{name: "question", usage: "the question (Markdown)", required: true})},
	}
}
