package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"steward/config"
	"steward/termsafe"
)

// giteaFlagKeys maps the global Gitea flags onto config keys.
var giteaFlagKeys = map[string]string{
	"gitea-url":    config.KeyGiteaURL,
	"gitea-login":  config.KeyTeaLogin,
	"gitea-remote": config.KeyGiteaRemote,
}

// applyConfig resolves the config file (flag > env > file > default) and fills every
// global the user did not set on the command line. A config file with errors stops the
// command: steward does not act on a configuration it cannot read. `steward config`
// reports the problems itself, so it is not stopped.
func (g *globals) applyConfig(cmd *cobra.Command) error {
	for c := cmd; c != nil; c = c.Parent() {
		if c.Name() == "config" {
			return nil
		}
	}
	flags, names := map[string]string{}, map[string]string{}
	changed := map[string]bool{}
	for name, key := range configFlagKeys {
		if f := cmd.Flags().Lookup(name); f != nil && f.Changed {
			flags[key], names[key], changed[name] = f.Value.String(), name, true
		}
	}
	for name, key := range giteaFlagKeys {
		// Only the global flags: `steward demo` has a --gitea-url of its own, for the demo's
		// server, which is not the configuration's Gitea.
		if f := cmd.Root().PersistentFlags().Lookup(name); f != nil && f.Changed {
			flags[key], names[key], changed[name] = f.Value.String(), name, true
		}
	}
	repoChanged := false
	if f := cmd.Root().PersistentFlags().Lookup("gitea-repo"); f != nil && f.Changed {
		repoChanged = true
	}
	g.inputs = config.Inputs{Path: g.configPath, Flags: flags, FlagNames: names, Workspace: g.workspace, Login: g.login}
	r, err := config.Load(g.inputs)
	if err != nil {
		return err
	}
	// --all reads every workspace of the file: several without a default is no ambiguity.
	all := false
	if f := cmd.Flags().Lookup("all"); f != nil && f.Changed && f.Value.String() == "true" {
		all = true
	}
	r.Problems = append(r.Problems, policyProblems(r)...)
	if r.HasErrors() {
		var msgs []string
		for _, p := range r.Problems {
			if all && p.Code == "workspace-ambiguous" {
				continue
			}
			if p.Severity == config.SevError {
				msgs = append(msgs, p.Code+": "+termsafe.Line(p.Message))
			}
		}
		// Each problem names its own source (a variable, a flag, a file): the configuration
		// is more than the file, which may not even exist.
		if len(msgs) > 0 {
			return &exitError{
				code: ExitError,
				msg: "steward's configuration has errors (run `steward config check` for every setting and its " +
					"source):\n  " + strings.Join(msgs, "\n  "),
			}
		}
	}
	for _, p := range r.Problems {
		if ceilingWarnings[p.Code] {
			fmt.Fprintln(cmd.ErrOrStderr(), "steward: warning:", termsafe.Line(p.Message))
		}
	}
	g.resolved = r
	set := func(flag string, dst *string, key string) {
		if changed[flag] {
			return
		}
		if s := r.Get(key); s.Value != "" && s.Source != config.FromDefault {
			*dst = s.Value
		}
	}
	g.resolved = r
	set("locks", &g.locksDir, config.KeyLocksDir)
	set("db", &g.dbPath, config.KeyDBPath)
	set("db-password-file", &g.dbPasswordFile, config.KeyDBPasswordFile)
	set("repo-root", &g.repoRoot, config.KeyRepoRoot)
	set("db-host", &g.dbHost, config.KeyDBHost)
	set("audit", &g.audit, config.KeyAuditLog)
	set("gitea-url", &g.gitea.url, config.KeyGiteaURL)
	set("gitea-login", &g.gitea.login, config.KeyTeaLogin)
	// The configured grant is a ceiling: the config resolved the role and read-only switch
	// with every flag and variable as a request it may only lower or turn on.
	g.role, g.readOnly, g.readOnlyWhy = r.Grant.Role, r.Grant.ReadOnly, r.Grant.ReadOnlyReason()
	g.ceiling = r.Grant.Ceiling
	if !repoChanged {
		owner, repo := r.Get(config.KeyGiteaOwner).Value, r.Get(config.KeyGiteaRepo).Value
		if owner != "" && repo != "" {
			g.gitea.repo = owner + "/" + repo
		}
	}
	if s := r.Get(config.KeyGiteaToken); s.Value != "" {
		g.giteaToken = s.Value
	}
	return nil
}

// ceilingWarnings are the problems a command prints on stderr before it runs: a request the
// configuration did not honour, or a system file that protects nothing.
var ceilingWarnings = map[string]bool{"role-capped": true, "read-only-locked": true, "system-config-permissions": true}
