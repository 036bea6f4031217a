package config

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// checkMode warns when a file holding a token is readable by group or others.
func (r *Resolved) checkMode(f File) {
	fi, err := os.Stat(r.Path)
	if err != nil || fi.Mode().Perm()&0o077 == 0 {
		return
	}
	for _, w := range f.Workspaces {
		if w.Gitea.Token != "" {
			r.problem(
				sevWarning,
				"config-permissions",
				fmt.Sprintf(
					"%s holds a token and is readable by group or others (mode %#o); run chmod 600 on it",
					r.Path,
					fi.Mode().Perm(),
				),
			)
			return
		}
	}
}

// resolveTokenFile fills the token from the workspace's token_file when nothing of higher
// precedence set it, warning about a token file others can read.
func (r *Resolved) resolveTokenFile(w Workspace) {
	if w.Gitea.TokenFile == "" {
		return
	}
	for i := range r.Settings {
		s := &r.Settings[i]
		if s.Key != KeyGiteaToken {
			continue
		}
		if s.Source == fromFlag || s.Source == fromEnv || s.Source == FromFile {
			r.problem(
				sevWarning,
				"token-twice",
				"both token and token_file are set for workspace "+r.Workspace+"; the "+string(s.Source)+" token wins",
			)
			return
		}
		fi, err := os.Stat(w.Gitea.TokenFile)
		if err != nil {
			r.problem(
				SevError,
				"token-file",
				fmt.Sprintf("token_file %s cannot be read: %v", w.Gitea.TokenFile, errors.Unwrap(err)),
			)
			return
		}
		if fi.Mode().Perm()&0o077 != 0 {
			r.problem(
				sevWarning,
				"token-file-permissions",
				fmt.Sprintf(
					"token_file %s is readable by group or others (mode %#o); run chmod 600 on it",
					w.Gitea.TokenFile,
					fi.Mode().Perm(),
				),
			)
		}
		b, err := os.ReadFile(w.Gitea.TokenFile)
		if err != nil {
			r.problem(
				SevError,
				"token-file",
				fmt.Sprintf("token_file %s cannot be read: %v", w.Gitea.TokenFile, errors.Unwrap(err)),
			)
			return
		}
		s.Value, s.Source, s.Origin = strings.TrimSpace(string(b)), FromFile, "token_file "+w.Gitea.TokenFile
	}
}

var roles = map[string]bool{"viewer": true, "operator": true, "controller": true, "admin": true}

// validate checks the resolved values and the file's own lists.
func (r *Resolved) validate(f *File) {
	for _, s := range r.Settings {
		if s.Invalid {
			continue // its parse problem says why
		}
		switch s.Key {
		case KeyNotifyBell, KeyNotifyDesktop:
			if _, err := strconv.ParseBool(s.Value); err != nil {
				r.problem(
					SevError,
					"bad-bool",
					fmt.Sprintf("%s = %q (%s): use true or false", s.Key, clip(s.Value), s.Origin),
				)
			}
		case KeyNotifyCommand:
			if _, err := ParseCommand(s.Value); err != nil {
				r.problem(SevError, "bad-command", fmt.Sprintf("%s (%s): %v", s.Key, s.Origin, err))
			}
		case KeyNotifyReescalations:
			if n, err := strconv.Atoi(s.Value); err != nil || n < 0 || n > 100 {
				r.problem(
					SevError,
					"bad-count",
					fmt.Sprintf("%s = %q (%s): use a whole number from 0 to 100", s.Key, clip(s.Value), s.Origin),
				)
			}
		case KeyClarificationSLA,
			KeyStalePR,
			KeyContentionWindow,
			KeyNotifyTimeout,
			KeyOrphanSLA,
			KeyCollisionSLA,
			KeySourceSLA:
			if d, err := time.ParseDuration(s.Value); err != nil || d <= 0 {
				r.problem(
					SevError,
					"bad-duration",
					fmt.Sprintf("%s = %q (%s) is not a positive duration such as 24h", s.Key, clip(s.Value), s.Origin),
				)
			}
		case KeyTheme:
			if s.Value != "auto" && s.Value != "dark" && s.Value != "light" {
				r.problem(
					SevError,
					"bad-theme",
					fmt.Sprintf("theme %q (%s): use auto, dark or light", clip(s.Value), s.Origin),
				)
			}
		case KeyRole:
			if !roles[strings.ToLower(s.Value)] {
				r.problem(
					SevError,
					"bad-role",
					fmt.Sprintf("role %q (%s): use viewer, operator, controller or admin", clip(s.Value), s.Origin),
				)
			}
		case KeyGiteaURL:
			if s.Value == "" {
				continue
			}
			u, err := url.Parse(s.Value)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				r.problem(SevError, "bad-url", fmt.Sprintf("gitea.url (%s) is not an http(s) URL", s.Origin))
			} else if u.User != nil {
				r.problem(SevError, "url-credentials", fmt.Sprintf("gitea.url (%s) carries credentials; put the token in "+
					"token_file instead", s.Origin))
			}
		case KeyLocksDir, KeyDBPath, KeyDBPasswordFile, KeyRepoRoot, KeyAuditLog:
			if strings.ContainsRune(s.Value, 0) {
				r.problem(SevError, "bad-path", s.Key+" contains a NUL byte")
			}
			if s.Key == KeyDBPath && isPostgresURL(s.Value) {
				if msg := postgresURLProblem(s.Value); msg != "" {
					r.problem(SevError, "db-url", "the control-plane DB URL ("+s.Origin+") "+msg)
				}
			} else if scheme := urlScheme(s.Value); s.Key == KeyDBPath && scheme != "" {
				// Read as a file name it would be "missing authority" forever: say what it is.
				r.problem(SevError, "db-scheme", fmt.Sprintf("the control-plane DB (%s) is a %s:// URL, and %s is not "+
					"supported: give a SQLite file's path or a postgres:// URL", s.Origin, scheme, scheme))
			}
		case KeyGiteaRemote:
			if !remoteName(s.Value) {
				r.problem(
					SevError,
					"bad-remote",
					fmt.Sprintf(
						"gitea.remote %q (%s) is not a git remote name: no spaces, control characters, quotes or backslashes, and not "+
							"starting with '-' or '.'",
						clip(s.Value),
						s.Origin,
					),
				)
			}
		case KeyDBHost, KeyHost:
			if !hostName(s.Value) {
				r.problem(
					SevError,
					"bad-host",
					fmt.Sprintf(
						"%s (%s) is not a host name: no spaces, control characters or slashes",
						s.Key,
						s.Origin,
					),
				)
			}
		}
	}
	for login, role := range f.Roles {
		if !roles[strings.ToLower(role)] {
			r.problem(
				SevError,
				"bad-role",
				fmt.Sprintf("roles.%s = %q: use viewer, operator, controller or admin", clip(login), clip(role)),
			)
		}
	}
	for _, m := range f.MarkerLabels {
		if strings.TrimSpace(m) == "" {
			r.problem(SevError, "empty-marker", "marker_labels holds an empty label")
		}
	}
	r.checkWorkspaces(f)
	for name, w := range f.Workspaces {
		if w.DBPath != "" && w.DBURL != "" {
			r.problem(
				SevError,
				"db-twice",
				"workspaces."+name+" sets both db_path and db_url: a workspace has one control-plane DB",
			)
		}
		if w.DBURL != "" && !isPostgresURL(w.DBURL) {
			r.problem(SevError, "db-url", "workspaces."+name+".db_url is not a postgres:// or postgresql:// URL")
		}
	}
	tea, url, tok := r.Get(KeyTeaLogin), r.Get(KeyGiteaURL), r.Get(KeyGiteaToken)
	switch {
	case tea.Value != "" && url.Value != "":
		r.problem(
			sevWarning,
			"gitea-twice",
			"both a tea login ("+tea.Origin+") and a URL ("+url.Origin+") are set; the URL and token win",
		)
	case url.Value != "" && tok.Value == "":
		r.problem(SevError, "gitea-no-token", "gitea.url is set but no token: set token_file, or STEWARD_GITEA_TOKEN")
	case url.Value == "" && tea.Value == "":
		r.problem(
			sevWarning,
			"gitea-none",
			"no Gitea is configured: steward falls back to the default tea login, and clarifications need one",
		)
	}
	if r.Get(KeyGiteaOwner).Value == "" || r.Get(KeyGiteaRepo).Value == "" {
		r.problem(
			sevWarning,
			"gitea-repo",
			"gitea.owner and gitea.repo are not both set: steward cannot tell which repository's items to read",
		)
	}
}

// Template is the content of a new config file (`steward config init`).
const Template = `# steward configuration — see docs/config.md.
# Flags and environment variables override what is written here.
default_workspace: main
workspaces:
  main:
    locks_dir: ~/.cache/gitea-tools/issue-locks
    db_path: ~/.cache/gitea-tools/control-plane/control_plane.sqlite3
    repo_root: .
    gitea:
      tea_login: ""        # a tea login name, or url + token_file below
      # url: https://gitea.example.org
      # token_file: ~/.config/steward/token   # mode 0600
      owner: ""
      repo: ""
      # remote: prgs       # the remote name the workers' lock files and DB rows give this
      #                    # repository; unset, steward infers it from the DB's rows
marker_labels: [status:blocked-pending-clarification]
blocked_label: status:blocked
clarification_sla: 24h
thresholds:
  stale_pr: 72h
  contention_window: 1h
roles: {}                  # gitea-login (or '*'): the highest role it may hold — viewer | operator | controller | admin
theme: auto
read_only: false
`

// ErrExists is returned by WriteNew when the file exists already.
var ErrExists = errors.New("config: file exists")

// WriteNew creates a new config file at path holding data, mode 0600 (its folder 0700).
// It never overwrites: an existing file is ErrExists.
func WriteNew(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	fh, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%w: %s", ErrExists, path)
	}
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	if _, err := fh.Write(data); err != nil {
		fh.Close()
		return fmt.Errorf("config: %w", err)
	}
	if err := fh.Sync(); err != nil {
		fh.Close()
		return fmt.Errorf("config: %w", err)
	}
	return fh.Close()
}

// isPostgresURL reports whether loc is a postgres:// or postgresql:// URL (the same rule
// as leases.IsPostgresURL: config imports no steward package).
func isPostgresURL(loc string) bool {
	l := strings.ToLower(strings.TrimSpace(loc))
	return strings.HasPrefix(l, "postgres://") || strings.HasPrefix(l, "postgresql://")
}

// urlScheme is the scheme of a value written as a URL ("mysql" of mysql://…), "" for a
// path (a file name may hold a colon, never "://" after a plain scheme).
func urlScheme(v string) string {
	scheme, _, ok := strings.Cut(strings.TrimSpace(v), "://")
	if !ok || scheme == "" {
		return ""
	}
	for i, c := range scheme {
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		later := c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'
		if !(letter || i > 0 && later) {
			return ""
		}
	}
	return strings.ToLower(scheme)
}

// postgresURLProblem says what is wrong with a control-plane DB URL ("" when nothing):
// unparseable, or carrying a password — which shows in argv, logs and this file. The
// message never quotes the URL.
func postgresURLProblem(loc string) string {
	u, err := url.Parse(strings.TrimSpace(loc))
	if err != nil {
		return "is not a URL"
	}
	_, pw := u.User.Password()
	for k := range u.Query() {
		if strings.EqualFold(k, "password") {
			pw = true
		}
	}
	if pw {
		return "carries a password; remove it and put it in db_password_file (a file only you can read), " +
			"PGPASSWORD or ~/.pgpass"
	}
	if u.Host == "" && u.Query().Get("host") == "" {
		return "names no host"
	}
	return ""
}
