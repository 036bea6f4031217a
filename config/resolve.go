package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Source says where a setting's value came from.
type Source string

// The sources, highest precedence first.
const (
	fromFlag    Source = "flag"
	fromEnv     Source = "env"
	FromFile    Source = "file"
	FromDefault Source = "default"
)

// Setting is one resolved value with its origin.
type Setting struct {
	Key    string `json:"key"`
	Value  string `json:"-"`
	Source Source `json:"source"`
	// Origin names the flag, variable or file key the value came from.
	Origin string `json:"origin,omitempty"`
	// Secret settings are never displayed.
	Secret bool `json:"secret,omitempty"`
	// Invalid: the file's value for this setting could not be read (a problem says why);
	// the setting has no value, and the configuration has an error.
	Invalid bool `json:"invalid,omitempty"`
}

// Display is the value as it may be shown: a secret reads "(set, hidden)" or "(not set)".
func (s Setting) Display() string {
	if s.Invalid {
		return "(invalid: see the problems below)"
	}
	if s.Secret {
		if s.Value == "" {
			return "(not set)"
		}
		return "(set, hidden)"
	}
	if s.Value == "" {
		return "(empty)"
	}
	if isPostgresURL(s.Value) {
		return redactURL(s.Value)
	}
	return s.Value
}

// redactURL is a PostgreSQL URL as it may be shown: scheme, user, host, port and
// database; never a password, never the query (which may carry one).
func redactURL(loc string) string {
	u, err := url.Parse(strings.TrimSpace(loc))
	if err != nil {
		return "postgres://(unparseable URL)"
	}
	out := url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}
	if u.User != nil {
		out.User = url.User(u.User.Username())
	}
	return out.String()
}

// shown renders the setting for output, secrets hidden.
func (s Setting) shown() map[string]string {
	return map[string]string{"key": s.Key, "value": s.Display(), "source": string(s.Source), "origin": s.Origin}
}

// Severity grades a problem.
type Severity string

// Problem severities: an error makes the configuration unusable; a warning does not.
const (
	SevError   Severity = "error"
	sevWarning Severity = "warning"
)

// Problem is one thing wrong with the configuration. Its message never holds a secret.
type Problem struct {
	Severity Severity `json:"severity"`
	Code     string   `json:"code"`
	Message  string   `json:"message"`
}

// Inputs are what Load resolves from besides the file.
type Inputs struct {
	// Path is an explicit config path (--config); empty uses STEWARD_CONFIG, then
	// $XDG_CONFIG_HOME/steward/config.yaml, then ~/.config/steward/config.yaml.
	Path string
	// Getenv looks variables up; os.LookupEnv when nil.
	Getenv func(string) (string, bool)
	// Flags holds the flags the user set, by setting key (see Keys).
	Flags map[string]string
	// FlagNames names the flag behind each key of Flags, for Origin ("--locks").
	FlagNames map[string]string
	// Workspace selects a workspace of the file; empty means default_workspace, else the
	// only one.
	Workspace string
	// Login is the Gitea login steward acts as (--login, STEWARD_GITEA_LOGIN): the key of
	// the roles maps.
	Login string
	// SystemPaths replaces the system-wide files read (SystemPath, then the one
	// STEWARD_SYSTEM_CONFIG names) — for tests in Go only; no flag or variable reaches it.
	SystemPaths []string
}

// Resolved is the configuration in effect.
type Resolved struct {
	// Path is the config file consulted; Found says whether it exists.
	Path  string `json:"path"`
	Found bool   `json:"found"`
	// Workspace is the workspace of the file in use ("" when none).
	Workspace string `json:"workspace,omitempty"`
	// Names lists every workspace of the file, by name (LoadAll resolves each).
	Names []string `json:"workspaces,omitempty"`
	// Roles maps Gitea logins to roles, from the file.
	Roles map[string]string `json:"roles,omitempty"`
	// System lists the system-wide files consulted (see SystemPath).
	System []SystemSource `json:"system"`
	// Grant is the role and read-only switch in effect once every ceiling is applied; the
	// role and read_only settings hold the same values.
	Grant Grant `json:"grant"`
	// Settings in Keys order, then the workspace's lease_policy values.
	Settings []Setting `json:"-"`
	// Policy is the workspace's lease_policy, valid values only (PolicyLookup).
	Policy   []policyEntry `json:"-"`
	Problems []Problem     `json:"problems"`
}

// Get returns the setting named key.
func (r *Resolved) Get(key string) Setting {
	for _, s := range r.Settings {
		if s.Key == key {
			return s
		}
	}
	return Setting{Key: key}
}

// Shown returns the settings as they may be printed (secrets hidden).
func (r *Resolved) Shown() []map[string]string {
	out := make([]map[string]string, 0, len(r.Settings))
	for _, s := range r.Settings {
		out = append(out, s.shown())
	}
	return out
}

// HasErrors reports whether any problem is an error.
func (r *Resolved) HasErrors() bool {
	for _, p := range r.Problems {
		if p.Severity == SevError {
			return true
		}
	}
	return false
}

// key describes one setting: its env variable and its default.
type key struct {
	name, env string
	secret    bool
	def       func(getenv func(string) string) string
	file      func(f *File, w *Workspace) string
}

// The setting keys, in display order.
const (
	KeyLocksDir         = "locks_dir"
	KeyDBPath           = "db_path"
	KeyDBPasswordFile   = "db_password_file"
	KeyRepoRoot         = "repo_root"
	KeyDBHost           = "db_host"
	KeyAuditLog         = "audit_log"
	KeyHost             = "host"
	KeyTeaLogin         = "gitea.tea_login"
	KeyGiteaURL         = "gitea.url"
	KeyGiteaToken       = "gitea.token"
	KeyGiteaOwner       = "gitea.owner"
	KeyGiteaRepo        = "gitea.repo"
	KeyGiteaRemote      = "gitea.remote"
	KeyMarkerLabels     = "marker_labels"
	KeyBlockedLabel     = "blocked_label"
	KeyClarificationSLA = "clarification_sla"
	KeyStalePR          = "thresholds.stale_pr"
	KeyContentionWindow = "thresholds.contention_window"
	KeyTheme            = "theme"
	KeyReadOnly         = "read_only"
	KeyRole             = "role"
	// The attention settings (docs/attention.md).
	KeyNotifyBell          = "notify.bell"
	KeyNotifyDesktop       = "notify.desktop"
	KeyNotifyCommand       = "notify.command"
	KeyNotifyTimeout       = "notify.timeout"
	KeyNotifyReescalations = "notify.reescalations"
	KeyOrphanSLA           = "attention.orphan_sla"
	KeyCollisionSLA        = "attention.collision_sla"
	KeySourceSLA           = "attention.source_sla"
)

func boolString(b *bool) string {
	if b == nil {
		return ""
	}
	return fmt.Sprint(*b)
}

// commandString writes a notify command as a JSON array (how STEWARD_NOTIFY_COMMAND takes
// it too): the arguments stay apart, never one string for a shell to split.
func commandString(argv []string) string {
	if len(argv) == 0 {
		return ""
	}
	b, _ := json.Marshal(argv)
	return string(b)
}

// ParseCommand reads a notify command written as a JSON array of strings, the program
// first. An empty value is no command.
func ParseCommand(s string) ([]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var argv []string
	if err := json.Unmarshal([]byte(s), &argv); err != nil || len(argv) == 0 || strings.TrimSpace(argv[0]) == "" {
		return nil, errors.New(`want a JSON array of strings, the program first, such as ["ntfy", "publish", "fleet"]`)
	}
	return argv, nil
}

func home(getenv func(string) string) string {
	if h := getenv("HOME"); h != "" {
		return h
	}
	h, _ := os.UserHomeDir()
	return h
}

func constant(v string) func(func(string) string) string {
	return func(func(string) string) string { return v }
}

func durString(d Duration) string {
	if d == 0 {
		return ""
	}
	return time.Duration(d).String()
}

var keys = []key{
	{name: KeyLocksDir, env: "STEWARD_LOCKS_DIR", def: func(g func(string) string) string {
		return filepath.Join(home(g), ".cache", "gitea-tools", "issue-locks")
	}, file: func(_ *File, w *Workspace) string { return w.LocksDir }},
	// db_path is the control-plane DB's location: a SQLite file, or the workspace's
	// db_url (a postgres:// URL) when the file sets that instead.
	{name: KeyDBPath, env: "GITEA_CONTROL_PLANE_DB", def: func(g func(string) string) string {
		return filepath.Join(home(g), ".cache", "gitea-tools", "control-plane", "control_plane.sqlite3")
	}, file: func(_ *File, w *Workspace) string {
		if w.DBURL != "" {
			return w.DBURL
		}
		return w.DBPath
	}},
	{name: KeyDBPasswordFile, env: "STEWARD_DB_PASSWORD_FILE", def: constant(""),
		file: func(_ *File, w *Workspace) string { return w.DBPasswordFile }},
	{name: KeyRepoRoot, env: "STEWARD_REPO_ROOT", def: constant("."),
		file: func(_ *File, w *Workspace) string { return w.RepoRoot }},
	// db_host: the host the control-plane DB was written on, when it is not this one. The
	// seed's rows record no host (its control plane is single-host); empty means this one.
	{name: KeyDBHost, env: "STEWARD_DB_HOST", def: constant(""),
		file: func(_ *File, w *Workspace) string { return w.DBHost }},
	// host: the host the workspace's lock directory lives on; empty means this one.
	{name: KeyHost, env: "STEWARD_LOCKS_HOST", def: constant(""),
		file: func(_ *File, w *Workspace) string { return w.Host }},
	{name: KeyAuditLog, env: "STEWARD_AUDIT_LOG", def: func(g func(string) string) string {
		state := g("XDG_STATE_HOME")
		if state == "" {
			state = filepath.Join(home(g), ".local", "state")
		}
		return filepath.Join(state, "steward", "audit.jsonl")
	}, file: func(_ *File, w *Workspace) string { return w.AuditLog }},
	{name: KeyTeaLogin, env: "STEWARD_TEA_LOGIN", def: constant(""),
		file: func(_ *File, w *Workspace) string { return w.Gitea.TeaLogin }},
	{name: KeyGiteaURL, env: "STEWARD_GITEA_URL", def: constant(""),
		file: func(_ *File, w *Workspace) string { return w.Gitea.URL }},
	{name: KeyGiteaToken, env: "STEWARD_GITEA_TOKEN", secret: true, def: constant(""),
		file: func(_ *File, w *Workspace) string { return w.Gitea.Token }},
	{name: KeyGiteaOwner, env: "STEWARD_GITEA_OWNER", def: constant(""),
		file: func(_ *File, w *Workspace) string { return w.Gitea.Owner }},
	{name: KeyGiteaRepo, env: "STEWARD_GITEA_REPO", def: constant(""),
		file: func(_ *File, w *Workspace) string { return w.Gitea.Repo }},
	// gitea.remote: the name the supervised system's rows give the repository's remote
	// (the seed's remote="prgs"); empty means inferred from the DB's rows.
	{name: KeyGiteaRemote, env: "STEWARD_GITEA_REMOTE", def: constant(""),
		file: func(_ *File, w *Workspace) string { return w.Gitea.Remote }},
	{name: KeyMarkerLabels, env: "STEWARD_MARKER_LABELS", def: constant("status:blocked-pending-clarification"),
		file: func(f *File, _ *Workspace) string { return strings.Join(f.MarkerLabels, ",") }},
	{name: KeyBlockedLabel, env: "STEWARD_BLOCKED_LABEL", def: constant("status:blocked"),
		file: func(f *File, _ *Workspace) string { return f.BlockedLabel }},
	{name: KeyClarificationSLA, env: "STEWARD_CLARIFICATION_SLA", def: constant("24h0m0s"),
		file: func(f *File, _ *Workspace) string { return durString(f.ClarificationSLA) }},
	{name: KeyStalePR, env: "STEWARD_STALE_PR", def: constant("72h0m0s"),
		file: func(f *File, _ *Workspace) string { return durString(f.Thresholds.StalePR) }},
	{name: KeyContentionWindow, env: "STEWARD_CONTENTION_WINDOW", def: constant("1h0m0s"),
		file: func(f *File, _ *Workspace) string { return durString(f.Thresholds.ContentionWindow) }},
	{name: KeyTheme, env: "STEWARD_THEME", def: constant("auto"),
		file: func(f *File, _ *Workspace) string { return f.Theme }},
	{name: KeyReadOnly, env: "STEWARD_READ_ONLY", def: constant("false"), file: func(f *File, _ *Workspace) string {
		if f.ReadOnly == nil {
			return ""
		}
		return fmt.Sprint(*f.ReadOnly)
	}},
	{name: KeyRole, env: "STEWARD_ROLE", def: constant("viewer"), file: func(*File, *Workspace) string { return "" }},
	{name: KeyNotifyBell, env: "STEWARD_NOTIFY_BELL", def: constant("true"),
		file: func(f *File, _ *Workspace) string { return boolString(f.Notify.Bell) }},
	{name: KeyNotifyDesktop, env: "STEWARD_NOTIFY_DESKTOP", def: constant("true"),
		file: func(f *File, _ *Workspace) string { return boolString(f.Notify.Desktop) }},
	{name: KeyNotifyCommand, env: "STEWARD_NOTIFY_COMMAND", def: constant(""),
		file: func(f *File, _ *Workspace) string { return commandString(f.Notify.Command) }},
	{name: KeyNotifyTimeout, env: "STEWARD_NOTIFY_TIMEOUT", def: constant("10s"),
		file: func(f *File, _ *Workspace) string { return durString(f.Notify.Timeout) }},
	{name: KeyNotifyReescalations, env: "STEWARD_NOTIFY_REESCALATIONS", def: constant("2"),
		file: func(f *File, _ *Workspace) string {
			if f.Notify.Reescalations == nil {
				return ""
			}
			return fmt.Sprint(*f.Notify.Reescalations)
		}},
	{name: KeyOrphanSLA, env: "STEWARD_ORPHAN_SLA", def: constant("1h0m0s"),
		file: func(f *File, _ *Workspace) string { return durString(f.Attention.OrphanSLA) }},
	{name: KeyCollisionSLA, env: "STEWARD_COLLISION_SLA", def: constant("15m0s"),
		file: func(f *File, _ *Workspace) string { return durString(f.Attention.CollisionSLA) }},
	{name: KeySourceSLA, env: "STEWARD_SOURCE_SLA", def: constant("15m0s"),
		file: func(f *File, _ *Workspace) string { return durString(f.Attention.SourceSLA) }},
}

// Keys lists the setting keys in display order.
func Keys() []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = k.name
	}
	return out
}

// DefaultPath is where steward looks for its config file.
func DefaultPath(getenv func(string) (string, bool)) string {
	g := plain(getenv)
	if p := g("STEWARD_CONFIG"); p != "" {
		return p
	}
	if x := g("XDG_CONFIG_HOME"); x != "" {
		return filepath.Join(x, "steward", "config.yaml")
	}
	return filepath.Join(home(g), ".config", "steward", "config.yaml")
}

func plain(getenv func(string) (string, bool)) func(string) string {
	if getenv == nil {
		getenv = os.LookupEnv
	}
	return func(k string) string { v, _ := getenv(k); return v }
}

// Load reads the config file (a missing file is fine: defaults apply) and resolves every
// setting. It returns an error only for a file that exists but cannot be read; every
// other finding is a Problem.
func Load(in Inputs) (*Resolved, error) {
	getenv := in.Getenv
	if getenv == nil {
		getenv = os.LookupEnv
	}
	r := &Resolved{Path: in.Path}
	// A file the person named — --config, or STEWARD_CONFIG — must exist: a typo would
	// otherwise run on the defaults and say nothing (an audit of the wrong log, "no
	// attempts recorded"). Only the default place may be absent.
	named := "--config"
	if r.Path == "" {
		if v, ok := getenv("STEWARD_CONFIG"); ok && v != "" {
			named = "STEWARD_CONFIG"
		} else {
			named = ""
		}
		r.Path = DefaultPath(getenv)
	}
	r.loadSystem(systemPaths(in, getenv))
	var f File
	var issues []issue
	data, err := readConfig(r.Path)
	switch {
	case errors.Is(err, fs.ErrNotExist) && named != "":
		r.problem(
			SevError,
			"config-missing",
			"the config file "+r.Path+" that "+named+" names does not exist; create it with "+
				"`steward config init --config "+r.Path+"`, or name the file that exists",
		)
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, err
	default:
		r.Found = true
		// Every problem of the file is reported, and what the rest of it says still holds.
		f, issues = parseAll(data)
		for _, is := range issues {
			where := ""
			if is.key != "" {
				where = is.key + ": "
			}
			if strings.HasPrefix(is.key, "workspaces.") && strings.Contains(is.reason, "already defined") {
				r.problem(
					SevError,
					"workspace-duplicate",
					"the config file "+r.Path+": "+where+"a workspace's name is listed twice ("+is.reason+"); each workspace needs "+
						"its own name",
				)
				continue
			}
			r.problem(SevError, "parse", "the config file "+r.Path+": "+where+is.reason)
		}
		r.checkMode(f)
	}
	ws := r.pickWorkspace(&f, in.Workspace)
	r.Roles = f.Roles
	g := plain(getenv)
	for _, k := range keys {
		s := Setting{Key: k.name, Secret: k.secret}
		if v, ok := in.Flags[k.name]; ok {
			s.Value, s.Source, s.Origin = v, fromFlag, "--"+k.name
			if n, ok := in.FlagNames[k.name]; ok {
				s.Origin = "--" + n
			}
		} else if v, ok := getenv(k.env); ok && v != "" {
			s.Value, s.Source, s.Origin = v, fromEnv, k.env
		} else if origin := fileOrigin(r.Workspace, k.name); invalidIn(issues, origin) {
			s.Source, s.Origin, s.Invalid = FromFile, origin, true
		} else if v := k.file(&f, &ws); v != "" {
			s.Value, s.Source, s.Origin = expandHome(v, g), FromFile, origin
			if k.name == KeyDBPath && ws.DBURL != "" {
				s.Origin = "workspaces." + r.Workspace + ".db_url"
			}
		} else {
			s.Value, s.Source = k.def(g), FromDefault
		}
		r.Settings = append(r.Settings, s)
	}
	r.resolvePolicy(ws, getenv)
	ws.Gitea.TokenFile = expandHome(ws.Gitea.TokenFile, g)
	r.resolveTokenFile(ws)
	r.validate(&f)
	flagName := in.FlagNames[KeyReadOnly]
	if flagName == "" {
		flagName = "read-only"
	}
	envRO, _ := getenv("STEWARD_READ_ONLY")
	r.applyCeilings(&f, in.Login, in.Flags[KeyReadOnly], flagName, strings.TrimSpace(envRO))
	r.hideTokens(&f)
	return r, nil
}

// hideTokens removes every token the configuration holds — the one in effect and any a
// workspace of the file names — from the problems' messages, whole or cut short (hide): a
// message may quote a value the file also holds as a token (a bad duration written as the
// token's text).
func (r *Resolved) hideTokens(f *File) {
	toks := []string{r.Get(KeyGiteaToken).Value}
	for _, w := range f.Workspaces {
		toks = append(toks, w.Gitea.Token)
	}
	for i := range r.Problems {
		for _, t := range toks {
			if t = strings.TrimSpace(t); len(t) >= 4 {
				r.Problems[i].Message = hide(r.Problems[i].Message, t)
			}
		}
	}
}

// invalidIn reports whether an issue of the file is about the setting at origin, or a
// mapping that holds it, or a part of it.
func invalidIn(issues []issue, origin string) bool {
	for _, is := range issues {
		if is.key != "" &&
			(is.key == origin || strings.HasPrefix(origin, is.key+".") || strings.HasPrefix(is.key, origin+".")) {
			return true
		}
	}
	return false
}

func fileOrigin(ws, key string) string {
	switch key {
	case KeyLocksDir,
		KeyDBPath,
		KeyDBPasswordFile,
		KeyRepoRoot,
		KeyDBHost,
		KeyHost,
		KeyAuditLog,
		KeyTeaLogin,
		KeyGiteaURL,
		KeyGiteaToken,
		KeyGiteaOwner,
		KeyGiteaRepo,
		KeyGiteaRemote:
		return "workspaces." + ws + "." + key
	}
	return key
}

func readConfig(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if fi.Size() > maxFileSize {
		return nil, fmt.Errorf("config: %s is larger than 1 MiB", path)
	}
	return os.ReadFile(path)
}

func (r *Resolved) problem(sev Severity, code, msg string) {
	r.Problems = append(r.Problems, Problem{Severity: sev, Code: code, Message: msg})
}

func (r *Resolved) pickWorkspace(f *File, want string) Workspace {
	names := make([]string, 0, len(f.Workspaces))
	for n := range f.Workspaces {
		names = append(names, n)
	}
	sort.Strings(names)
	r.Names = names
	switch {
	case want != "":
	case f.DefaultWorkspace != "":
		want = f.DefaultWorkspace
	case len(names) == 1:
		want = names[0]
	case len(names) > 1:
		r.problem(
			SevError,
			"workspace-ambiguous",
			fmt.Sprintf(
				"the file has %d workspaces (%s) and no default_workspace; set one or choose with --workspace",
				len(names),
				strings.Join(names, ", "),
			),
		)
		return Workspace{}
	default:
		return Workspace{}
	}
	w, ok := f.Workspaces[want]
	if !ok {
		r.problem(
			SevError,
			"workspace-unknown",
			fmt.Sprintf("workspace %q is not in the file (it has: %s)", want, strings.Join(names, ", ")),
		)
		return Workspace{}
	}
	r.Workspace = want
	return w
}

// expandHome expands a leading "~/" in a path written in the file.
func expandHome(p string, getenv func(string) string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		return filepath.Join(home(getenv), rest)
	}
	return p
}
