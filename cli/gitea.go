package cli

import (
	"io"

	"steward/app"
	"steward/gitea"
	"steward/govern/actionid"
)

// giteaFlags are the global flags that select a Gitea repository. The token comes from
// $STEWARD_GITEA_TOKEN or the tea CLI's config, never from the command line.
type giteaFlags struct {
	url, login, repo, remote string
}

// giteaClient returns the configured client (app.NewClient: the login, the repository,
// the marker and blocked labels), or nil when no repository is configured. Warnings (a
// token file others can read, TLS checks off) go to warn.
func (g *globals) giteaClient(warn io.Writer) (*gitea.Client, error) {
	s, err := g.settings()
	if err != nil {
		return nil, err
	}
	s.Warn = warn
	return app.NewClient(s)
}

// clarificationCommands are the CLI faces of the clarification actions.
func clarificationCommands() []actionCmd {
	return []actionCmd{
		{
			path:   []string{"answer"},
			action: actionid.Answer,
			short:  "Answer a clarification: comment with the answer, then remove the marker label",
			flags:  append([]flagSpec{{name: "body", usage: "the answer (Markdown)", required: true}}, itemFlags...),
		},
		{
			path:   []string{"ask"},
			action: actionid.Ask,
			worker: true,
			short:  "Ask for clarification on a claimed item, then release it (worker action)",
			flags: ownLeaseFlags(flagSpec{name: "lease", target: "lease", usage: "the worker's lease id", required: true},
				flagSpec{name: "question", usage: "the question (Markdown)", required: true}),
		},
	}
}
