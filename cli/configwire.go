package cli

import (
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"steward/config"
)

// giteaFlagKeys maps the global Gitea flags onto config keys.
var giteaFlagKeys = map[string]string{
	"gitea-url":   config.KeyGiteaURL,
	"gitea-login": config.KeyTeaLogin,
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
		if f := cmd.Flags().Lookup(name); f != nil && f.Changed {
			flags[key], names[key], changed[name] = f.Value.String(), name, true
		}
	}
	repoChanged := false
	if f := cmd.Flags().Lookup("gitea-repo"); f != nil && f.Changed {
		repoChanged = true
	}
	r, err := config.Load(config.Inputs{Path: g.configPath, Flags: flags, FlagNames: names, Workspace: g.workspace})
	if err != nil {
		return err
	}
	if r.HasErrors() {
		var msgs []string
		for _, p := range r.Problems {
			if p.Severity == config.SevError {
				msgs = append(msgs, p.Code+": "+p.Message)
			}
		}
		return &exitError{code: ExitError, msg: "the config file " + r.Path + " has errors (run `steward config check`):\n  " + strings.Join(msgs, "\n  ")}
	}
	set := func(flag string, dst *string, key string) {
		if changed[flag] {
			return
		}
		if s := r.Get(key); s.Value != "" && s.Source != config.FromDefault {
			*dst = s.Value
		}
	}
	set("locks", &g.locksDir, config.KeyLocksDir)
	set("db", &g.dbPath, config.KeyDBPath)
	set("repo-root", &g.repoRoot, config.KeyRepoRoot)
	set("db-host", &g.dbHost, config.KeyDBHost)
	set("audit", &g.audit, config.KeyAuditLog)
	set("as-role", &g.role, config.KeyRole)
	set("gitea-url", &g.gitea.url, config.KeyGiteaURL)
	set("gitea-login", &g.gitea.login, config.KeyTeaLogin)
	if !changed["read-only"] {
		if s := r.Get(config.KeyReadOnly); s.Source != config.FromDefault {
			if v, err := strconv.ParseBool(s.Value); err == nil {
				g.readOnly = v
			}
		}
	}
	if !repoChanged {
		owner, repo := r.Get(config.KeyGiteaOwner).Value, r.Get(config.KeyGiteaRepo).Value
		if owner != "" && repo != "" {
			g.gitea.repo = owner + "/" + repo
		}
	}
	if s := r.Get(config.KeyGiteaToken); s.Value != "" {
		g.giteaToken = s.Value
	}
	g.roles = r.Roles
	// A role granted to the Gitea login in the config applies unless --as-role was given.
	if !changed["as-role"] && g.login != "" {
		if role, ok := g.roles[g.login]; ok {
			g.role = role
		}
	}
	return nil
}
