package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"steward/app"
	"steward/config"
	"steward/gitea"
	"steward/govern"
)

// Exit codes of every steward command.
const (
	ExitOK      = 0
	ExitError   = 1
	ExitRefused = 3
	exitUnknown = 4
)

// exitError carries an exit code out of a command.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

// globals are the flags every command shares.
type globals struct {
	locksDir string
	dbPath   string
	// dbPasswordFile holds the PostgreSQL password of a postgres:// --db (never argv).
	dbPasswordFile string
	dbHost         string
	repoRoot       string
	audit          string
	role           string
	login          string
	readOnly       bool
	jsonOut        bool
	gitea          giteaFlags
	// configPath and workspace select the config file and its workspace.
	configPath string
	workspace  string
	// inputs are what applyConfig resolved the configuration from (status --all resolves
	// every workspace from them).
	inputs config.Inputs
	// giteaToken comes from the config file when it holds one; never from a flag.
	giteaToken string
	// readOnlyWhy says who turned read-only on (config.Grant.ReadOnlyReason); ceiling is
	// the highest role the configuration grants ("" when it maps none).
	readOnlyWhy string
	ceiling     string
	// resolved is the configuration applyConfig resolved (nil before it ran).
	resolved *config.Resolved
	// redactor knows steward's own secrets (the Gitea token, once a client is built): the
	// audit log and every snapshot printed or drawn go through it.
	redactor *govern.Redactor
}

// secrets returns the command's redactor.
func (g *globals) secrets() *govern.Redactor {
	if g.redactor == nil {
		g.redactor = govern.NewRedactor()
	}
	return g.redactor
}

func home() string {
	h, err := os.UserHomeDir()
	if err != nil {
		return "."
	}
	return h
}

func envOr(key, def string) string {
	if v, ok := os.LookupEnv(key); ok && v != "" {
		return v
	}
	return def
}

// defaultLocksDir is the supervised system's lock directory.
func defaultLocksDir() string {
	return envOr("STEWARD_LOCKS_DIR", filepath.Join(home(), ".cache", "gitea-tools", "issue-locks"))
}

// defaultDBPath is the supervised system's control-plane DB, honouring GITEA_CONTROL_PLANE_DB.
func defaultDBPath() string {
	return envOr(
		"GITEA_CONTROL_PLANE_DB",
		filepath.Join(home(), ".cache", "gitea-tools", "control-plane", "control_plane.sqlite3"),
	)
}

// defaultAuditPath is where steward keeps its audit log.
func defaultAuditPath() string {
	state := envOr("XDG_STATE_HOME", filepath.Join(home(), ".local", "state"))
	return envOr("STEWARD_AUDIT_LOG", filepath.Join(state, "steward", "audit.jsonl"))
}

// newRoot returns the steward command tree.
func newRoot(stdout, stderr io.Writer) *cobra.Command {
	g := &globals{}
	root := &cobra.Command{
		Use:           "steward",
		Short:         "A terminal workbench for supervising a fleet of autonomous coding workers",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	pf := root.PersistentFlags()
	pf.StringVar(&g.locksDir, "locks", defaultLocksDir(), "lock-file directory")
	pf.StringVar(
		&g.dbPath,
		"db",
		defaultDBPath(),
		"control-plane DB: a SQLite file (the embedded default) or a postgres:// URL without a password",
	)
	pf.StringVar(
		&g.dbPasswordFile,
		"db-password-file",
		envOr("STEWARD_DB_PASSWORD_FILE", ""),
		"file holding the PostgreSQL password (mode 0600; else PGPASSWORD or ~/.pgpass)",
	)
	pf.StringVar(
		&g.dbHost,
		"db-host",
		envOr("STEWARD_DB_HOST", ""),
		"host the control-plane DB was written on, when not this one (its rows without a host are then unknown, never dead)",
	)
	pf.StringVar(
		&g.repoRoot,
		"repo-root",
		envOr("STEWARD_REPO_ROOT", "."),
		"canonical repository root (worktrees under branches/)",
	)
	pf.StringVar(&g.audit, "audit", defaultAuditPath(), "steward's audit log (JSON lines)")
	pf.StringVar(
		&g.role,
		"as-role",
		envOr("STEWARD_ROLE", "viewer"),
		"your steward role: viewer, operator, controller or admin",
	)
	pf.StringVar(&g.login, "login", envOr("STEWARD_GITEA_LOGIN", ""), "your Gitea login, recorded as the actor")
	pf.BoolVar(&g.readOnly, "read-only", false, "refuse every change (enforced in the governed core)")
	pf.BoolVar(&g.jsonOut, "json", false, "print JSON")
	pf.StringVar(
		&g.gitea.url,
		"gitea-url",
		envOr(gitea.EnvURL, ""),
		"Gitea base URL (token from $"+gitea.EnvToken+" or the tea config)",
	)
	pf.StringVar(&g.gitea.login, "gitea-login", "", "tea CLI login name to use (default: tea's default login)")
	pf.StringVar(
		&g.gitea.remote,
		"gitea-remote",
		"",
		"the remote name the workers' lock files and DB rows give the Gitea repository (gitea.remote; default: inferred "+
			"from the DB's rows)",
	)
	pf.StringVar(
		&g.gitea.repo,
		"gitea-repo",
		envOr("STEWARD_GITEA_REPO", ""),
		"owner/name of the Gitea repository the workers coordinate through",
	)
	pf.StringVar(
		&g.configPath,
		"config",
		"",
		"config file (default $STEWARD_CONFIG, else $XDG_CONFIG_HOME/steward/config.yaml)",
	)
	pf.StringVar(&g.workspace, "workspace", "", "workspace of the config file to use")
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		if cmd.Name() == "version" && cmd.Parent() == cmd.Root() {
			return nil // what the binary is, whatever the configuration says
		}
		return g.applyConfig(cmd)
	}
	root.SetFlagErrorFunc(flagError)
	addActionCommands(root, g)
	addAttentionList(root, g)
	addAuditCommands(root, g)
	addStatusCommand(root, g)
	addHistoryCommand(root, g)
	addDemoCommand(root, g)
	addConfigCommands(root, g)
	addUICommand(root, g)
	addMCPCommand(root, g)
	addWatchCommand(root, g)
	addInitCommand(root, g)
	addVersionCommand(root, g)
	return root
}

// Main runs steward with args and returns the process exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	root := newRoot(stdout, stderr)
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return ExitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.msg != "" {
			fmt.Fprintln(stderr, onePrefix(ee.msg))
		}
		return ee.code
	}
	fmt.Fprintln(stderr, onePrefix("steward: "+err.Error()))
	return ExitError
}

// onePrefix drops a message's leading "X: " when what follows starts with X again — a
// wrapped error that already names its command ("steward mcp: steward mcp serves …",
// "steward: steward init …") says it once.
func onePrefix(msg string) string {
	for {
		head, rest, ok := strings.Cut(msg, ": ")
		if !ok || head == "" || !strings.HasPrefix(rest, head+" ") && !strings.HasPrefix(rest, head+":") {
			return msg
		}
		msg = rest
	}
}

// core builds the governed core (app.NewCore) from the session's settings: its audit log,
// its Gitea client, the actor, read-only.
func (g *globals) core() (*govern.Core, func(), error) {
	st, err := g.settings()
	if err != nil {
		return nil, nil, err
	}
	st.Audit, st.Warn, st.Step = app.AuditWrite, os.Stderr, coreStep
	return app.NewCore(st)
}

// settings are a session's settings: the configuration (app.FromConfig: every key) with
// the global flags on top (applyConfig already resolved the flags that are config keys;
// --gitea-repo, --as-role and --login are requests it capped). Its redactor is the
// command's.
func (g *globals) settings() (app.Settings, error) {
	r := g.resolved
	if r == nil {
		var err error
		if r, err = config.Load(config.Inputs{Path: g.configPath, Workspace: g.workspace, Login: g.login}); err != nil {
			return app.Settings{}, err
		}
	}
	s, err := app.FromConfig(r, os.LookupEnv)
	if err != nil {
		return s, &exitError{code: ExitError, msg: err.Error()}
	}
	role, err := govern.ParseRole(g.role)
	if err != nil {
		return app.Settings{}, err
	}
	s.LocksDir, s.DBPath, s.DBPasswordFile, s.DBHost = g.locksDir, g.dbPath, g.dbPasswordFile, g.dbHost
	s.RepoRoot, s.AuditPath = g.repoRoot, g.audit
	s.Gitea.Repo, s.Gitea.URL, s.Gitea.TeaLogin, s.Gitea.Token = g.gitea.repo, g.gitea.url, g.gitea.login, g.giteaToken
	s.Role, s.Login, s.ReadOnly, s.ReadOnlyReason = role, g.login, g.readOnly, g.readOnlyWhy
	s.Secrets = g.secrets()
	s.HostNow = hostNow
	return s, nil
}

// hostNow is this host's clock for every session (nil: time.Now). Tests set a wrong one, as
// a monitoring host whose clock runs fast has.
var hostNow func() time.Time

// flagArgument matches pflag's message for a value its parser refused.
var flagArgument = regexp.MustCompile(`^invalid argument "((?:[^"\\]|\\.)*)" for "(?:-[^,]+, )?--([^"]+)" flag: `)

// flagError says which flag got which value and what it accepts, instead of the parser's
// own words (strconv.ParseBool: parsing "maybe": invalid syntax).
func flagError(cmd *cobra.Command, err error) error {
	m := flagArgument.FindStringSubmatch(err.Error())
	if m == nil {
		return &exitError{code: ExitError, msg: err.Error() + " (see --help)"}
	}
	val, name := m[1], m[2]
	if v, uerr := strconv.Unquote(`"` + m[1] + `"`); uerr == nil {
		val = v
	}
	want := ""
	if f := cmd.Flags().Lookup(name); f != nil {
		switch f.Value.Type() {
		case "bool":
			want = "true or false (--" + name + " alone means true)"
		case "int", "int8", "int16", "int32", "int64":
			want = "a whole number"
		case "uint", "uint8", "uint16", "uint32", "uint64":
			want = "a whole number, 0 or more"
		case "float32", "float64":
			want = "a number, such as 20 or 0.5"
		case "duration":
			want = "a duration: a number with a unit, such as 90s, 10m or 1h30m"
		}
	}
	if want == "" {
		// A value type of our own says what it wants in its own words (no parser inside).
		return &exitError{code: ExitError, msg: fmt.Sprintf("--%s %q: %s", name, clipArg(val), err.Error()[len(m[0]):])}
	}
	return &exitError{code: ExitError, msg: fmt.Sprintf("--%s %q is not %s", name, clipArg(val), want)}
}
