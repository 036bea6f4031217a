package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"steward/config"
	"steward/termsafe"
)

// configFlagKeys maps the global flags onto config setting keys.
var configFlagKeys = map[string]string{
	"locks":            config.KeyLocksDir,
	"db":               config.KeyDBPath,
	"db-password-file": config.KeyDBPasswordFile,
	"repo-root":        config.KeyRepoRoot,
	"db-host":          config.KeyDBHost,
	"audit":            config.KeyAuditLog,
	"as-role":          config.KeyRole,
	"read-only":        config.KeyReadOnly,
}

func addConfigCommands(root *cobra.Command, g *globals) {
	grp := &cobra.Command{Use: "config", Short: "steward's configuration file: check it, create it"}
	var offline bool
	check := &cobra.Command{
		Use:   "check",
		Short: "Say which value each setting has and where it comes from (flag, env, file, default), and what is wrong",
		Long: `check resolves every setting (flag > environment > file > default) and says where each
value comes from, then checks what will be used: the lock directory is a directory steward
can list, db_path a regular SQLite file it can read, repo_root a directory holding branches/,
the audit log a file (or a place for one) steward can write, and the Gitea login resolves and
the server accepts its token (not with --offline). Paths steward can read but not write are
warnings unless it is read-only. Every problem is listed, not the first. It exits 1 when a
problem is an error, 0 otherwise; it never prints a token.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			flags, names := map[string]string{}, map[string]string{}
			for name, key := range configFlagKeys {
				if f := cmd.Flags().Lookup(name); f != nil && f.Changed {
					flags[key], names[key] = f.Value.String(), name
				}
			}
			r, err := config.Load(
				config.Inputs{Path: g.configPath, Flags: flags, FlagNames: names, Workspace: g.workspace, Login: g.login},
			)
			if err != nil {
				return err
			}
			// What will be used, checked: the paths, and the Gitea login.
			r.CheckPaths()
			r.Problems = append(r.Problems, policyProblems(r)...)
			r.Problems = append(r.Problems, checkGitea(cmd.Context(), r, offline)...)
			if len(r.Names) > 1 {
				// Every workspace of the file is checked: its paths, its Gitea, its entry.
				all, err := config.LoadAll(
					config.Inputs{Path: g.configPath, Flags: flags, FlagNames: names, Workspace: g.workspace, Login: g.login},
				)
				if err != nil {
					return err
				}
				seen := map[string]bool{}
				for _, p := range r.Problems {
					seen[p.Message] = true
				}
				for _, o := range all {
					if o.Workspace == r.Workspace {
						continue
					}
					o.CheckPaths()
					o.Problems = append(o.Problems, checkGitea(cmd.Context(), o, offline)...)
					for _, p := range o.Problems {
						if !seen[p.Message] {
							seen[p.Message] = true
							p.Message = "workspace " + o.Name() + ": " + p.Message
							r.Problems = append(r.Problems, p)
						}
					}
				}
			}
			view := configCheckView{r.Path, r.Found, r.System, r.Workspace, r.Grant, r.Shown(), r.Problems}
			if view.Problems == nil {
				view.Problems = []config.Problem{}
			}
			_ = printOut(cmd.OutOrStdout(), g.jsonOut, view, func(w io.Writer) { writeConfigCheck(w, r) })
			if r.HasErrors() {
				return &exitError{code: ExitError}
			}
			return nil
		},
	}
	check.Flags().BoolVar(&offline, "offline", false, "do not contact Gitea (the login is still resolved)")
	initCmd := &cobra.Command{
		Use:   "init",
		Short: "Create a commented config file (mode 0600); never overwrites one",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p := g.configPath
			if p == "" {
				p = config.DefaultPath(nil)
			}
			if err := config.WriteNew(p, []byte(config.Template)); err != nil {
				if errors.Is(err, config.ErrExists) {
					return &exitError{code: ExitError, msg: err.Error() + "; edit it, or run `steward config check`"}
				}
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "created %s (mode 0600); check it with `steward config check`\n", p)
			return nil
		},
	}
	grp.AddCommand(check, initCmd)
	root.AddCommand(grp)
}

func writeConfigCheck(w io.Writer, r *config.Resolved) {
	state := "not found: defaults, env and flags apply"
	if r.Found {
		state = "found"
	}
	for _, s := range r.System {
		sys := "not present"
		switch {
		case s.Found && s.Protected:
			sys = "present; only root can change it"
		case s.Found:
			sys = "present; NOT protected: others than root can change it"
		}
		fmt.Fprintf(w, "system file %s (%s)\n", termsafe.Line(s.Path), sys)
	}
	fmt.Fprintf(w, "config file %s (%s)\n", termsafe.Line(r.Path), state)
	gr := r.Grant
	ceil := "none configured: the role asked for applies"
	if gr.Ceiling != "" {
		ceil = gr.Ceiling + " (" + termsafe.Line(gr.CeilingOrigin) + ")"
	}
	login := gr.Login
	if login == "" {
		login = "(none given)"
	}
	fmt.Fprintf(w, "login       %s\nceiling     %s\n", termsafe.Line(login), ceil)
	if r.Workspace != "" {
		fmt.Fprintf(w, "workspace   %s\n", termsafe.Line(r.Workspace))
	}
	if len(r.Names) > 1 {
		fmt.Fprintf(
			w,
			"workspaces  %s (steward status --all, steward ui --workspace NAME)\n",
			termsafe.Line(strings.Join(r.Names, ", ")),
		)
	}
	fmt.Fprintln(w)
	for _, s := range r.Settings {
		origin := ""
		if s.Origin != "" {
			origin = "  (" + termsafe.Line(s.Origin) + ")"
		}
		fmt.Fprintf(w, "%-30s %-8s %s%s\n", s.Key, s.Source, termsafe.Line(s.Display()), origin)
	}
	for login, role := range r.Roles {
		fmt.Fprintf(w, "%-30s %-8s %s\n", "roles."+termsafe.Line(login), config.FromFile, termsafe.Line(role))
	}
	if len(r.Problems) == 0 {
		fmt.Fprintln(w, "\nno problems found")
		return
	}
	fmt.Fprintln(w)
	for _, p := range r.Problems {
		fmt.Fprintf(w, "%-7s %s: %s\n", p.Severity, p.Code, termsafe.Line(p.Message))
	}
}

// configCheckView is `steward config check --json`.
type configCheckView struct {
	Path      string                `json:"path"`
	Found     bool                  `json:"found"`
	System    []config.SystemSource `json:"system"`
	Workspace string                `json:"workspace,omitempty"`
	Grant     config.Grant          `json:"grant"`
	Settings  []map[string]string   `json:"settings"`
	Problems  []config.Problem      `json:"problems"`
}
