package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"steward/gitea"
	"steward/sim"
	"steward/termsafe"
)

// demoFlags are `steward demo`'s own flags.
type demoFlags struct {
	headless   bool
	dur        time.Duration
	seed       uint64
	workers    workersFlag
	speed      float64
	issues     int
	keep       bool
	giteaURL   string
	giteaToken string
	// giteaTokenFile names a file holding the token (never the command line).
	giteaTokenFile string
	giteaRepo      string
	verbose        bool
}

// demoReport is the --json summary of a headless run.
type demoReport struct {
	Root      string            `json:"root,omitempty"`
	LocksDir  string            `json:"locks_dir,omitempty"`
	DBPath    string            `json:"db_path,omitempty"`
	RepoRoot  string            `json:"repo_root,omitempty"`
	AuditLog  string            `json:"audit_log,omitempty"`
	GiteaURL  string            `json:"gitea_url"`
	GiteaAddr string            `json:"gitea_addr,omitempty"`
	Repo      string            `json:"repo"`
	Kept      bool              `json:"kept"`
	Env       map[string]string `json:"env"`
	// Config is the demo's configuration file (its workspace and compressed lease policy);
	// StatusCommand the one command that reads the workspace alike, as shell words.
	Config        string   `json:"config,omitempty"`
	StatusCommand []string `json:"status_command,omitempty"`
	// Try is, for a kept workspace, what the README's examples take: its config file and a
	// claim the run left (item, lease, lock file).
	Try     *demoTry    `json:"try,omitempty"`
	Summary sim.Summary `json:"summary"`
}

func addDemoCommand(root *cobra.Command, g *globals) {
	f := &demoFlags{}
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Build a lively demo workspace in a temp folder, start simulated workers, and open the workbench",
		Long: `demo builds a complete workspace in a temporary folder — control-plane DB, lock files, a
repository root with branches/, an audit log and a Gitea (the in-process API subset, or a
real server with --gitea-url, its token from $STEWARD_GITEA_TOKEN or --gitea-token-file) —
seeds it with issues and pull requests, and
starts simulated workers that claim, heartbeat, contend, die and ask questions through the
governed core. Time is compressed by --speed (a 10-minute lease lives 30 s at the default).

Everything is removed on exit unless --keep. --headless runs only the simulation for --for
and prints what happened.

Of the global flags, the demo honours --config (theme, notify settings, role and read-only
ceilings), --as-role (default operator in the workbench), --read-only and --json; it refuses
the ones that name another workspace or identity (--db, --locks, --repo-root, --audit,
--db-host, --db-password-file, --workspace, --login, --gitea-login, --gitea-remote).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runDemo(cmd, g, f) },
	}
	fl := cmd.Flags()
	fl.BoolVar(&f.headless, "headless", false, "run only the simulation and print what happened")
	fl.DurationVar(&f.dur, "for", 0, "how long to run (wall clock); default 60s headless, until quit otherwise")
	fl.Uint64Var(&f.seed, "seed", 1, "seed of the simulation: the same seed makes the same decisions")
	f.workers = workersFlag{n: 8}
	fl.Var(
		&f.workers,
		"workers",
		"simulated workers: a number (in-process, through the governed core), mcp (8 MCP clients of a steward mcp "+
			"process) or mcp:N",
	)
	fl.Float64Var(
		&f.speed,
		"speed",
		sim.DefaultSpeed,
		"time compression (1 = the real lease policy; 20 = a 10-minute lease lives 30 s)",
	)
	fl.IntVar(&f.issues, "issues", 30, "number of issues to seed")
	fl.BoolVar(&f.keep, "keep", false, "keep the workspace folder on exit and print how to inspect it")
	fl.StringVar(&f.giteaURL, "gitea-url", "", "use a real Gitea at this URL instead of the in-process subset")
	fl.StringVar(
		&f.giteaTokenFile,
		"gitea-token-file",
		"",
		"file holding the access token for --gitea-url (mode 0600); else $"+gitea.EnvToken,
	)
	fl.StringVar(
		&f.giteaToken,
		"gitea-token",
		"",
		"deprecated: puts the token on the command line, readable by every user of the machine; use $"+
			gitea.EnvToken+" or --gitea-token-file",
	)
	_ = fl.MarkHidden("gitea-token")
	fl.StringVar(&f.giteaRepo, "gitea-repo", "", "owner/name of an empty repository on --gitea-url (default: create one)")
	fl.BoolVar(&f.verbose, "verbose", false, "headless: print heartbeats too")
	root.AddCommand(cmd)
}

// demoRefuses are the global flags that name a workspace or an identity: the demo builds its
// own workspace in a temp folder and acts as its own simulated staff, so it refuses them
// rather than run beside what they name. It honours --config (the theme, the notify
// settings, the role and read-only ceilings), --as-role, --read-only and --json.
var demoRefuses = []string{
	"locks",
	"db",
	"db-password-file",
	"db-host",
	"repo-root",
	"audit",
	"workspace",
	"login",
	"gitea-login",
	"gitea-remote",
}

// refuseWorkspaceFlags refuses the global flags in demoRefuses the person gave.
func refuseWorkspaceFlags(cmd *cobra.Command) error {
	var given []string
	for _, name := range demoRefuses {
		if f := cmd.Flags().Lookup(name); f != nil && f.Changed {
			given = append(given, "--"+name)
		}
	}
	if len(given) == 0 {
		return nil
	}
	return &exitError{
		code: ExitError,
		msg: "steward demo builds its own workspace in a temp folder and takes no " + strings.Join(given, ", ") +
			": it would not read or write what that names. To look at a workspace, run `steward ui` or `steward status` " +
			"with it; to look at a demo's, run the demo with --keep and use the command it prints",
	}
}

func runDemo(cmd *cobra.Command, g *globals, f *demoFlags) error {
	out := cmd.OutOrStdout()
	if err := refuseWorkspaceFlags(cmd); err != nil {
		return err
	}
	if f.workers.n <= 0 || f.speed <= 0 || f.issues <= 0 {
		return &exitError{code: ExitError, msg: "--workers, --speed and --issues must be positive"}
	}
	opts := sim.DemoOptions{Keep: f.keep, Seed: f.seed, Workers: f.workers.n, Speed: f.speed, Issues: f.issues}
	if f.giteaToken != "" {
		fmt.Fprintln(
			cmd.ErrOrStderr(),
			"steward: warning: --gitea-token puts the token on the command line, where every user of this machine can read "+
				"it (/proc/<pid>/cmdline) and your shell history keeps it; use $"+gitea.EnvToken+" or --gitea-token-file instead",
		)
	}
	if g.readOnly && f.giteaURL != "" {
		return &exitError{
			code: ExitError,
			msg: "steward is read-only here (" + g.readOnlyWhy + "), and a demo on a real Gitea writes to it (issues, " +
				"comments, labels); run the demo without --gitea-url",
		}
	}
	if f.giteaURL != "" {
		tok, err := demoToken(f)
		if err != nil {
			return &exitError{code: ExitError, msg: err.Error()}
		}
		opts.GiteaURL, opts.GiteaToken = f.giteaURL, tok
		if opts.GiteaToken == "" {
			return &exitError{
				code: ExitError,
				msg:  "--gitea-url needs a token: set $" + gitea.EnvToken + " or give --gitea-token-file",
			}
		}
		if f.giteaRepo != "" {
			o, r, ok := strings.Cut(f.giteaRepo, "/")
			if !ok || o == "" || r == "" {
				return &exitError{code: ExitError, msg: "--gitea-repo must be owner/name"}
			}
			opts.Owner, opts.Repo = o, r
		}
	}
	if f.headless && !g.jsonOut {
		opts.OnEvent = func(e sim.Event) {
			if e.Kind != sim.EventHeartbeat || f.verbose {
				fmt.Fprintln(out, termsafe.Line(e.String()))
			}
		}
	}
	base := cmd.Context()
	if base == nil {
		base = context.Background()
	}
	ctx, stop := signal.NotifyContext(base, os.Interrupt, syscall.SIGTERM)
	defer stop()
	d, err := sim.NewDemo(ctx, opts)
	if err != nil {
		if d != nil {
			_ = d.Close()
		}
		return err
	}
	defer d.Close()
	if f.workers.mcp {
		srv, err := startDemoMCP(ctx, d)
		if err != nil {
			return err
		}
		defer srv.stop()
		if err := d.SetHands(srv.hands); err != nil {
			return err
		}
		if f.headless && !g.jsonOut {
			fmt.Fprintf(out, "workers speak MCP to steward mcp at %s (pid %d; log %s)\n", srv.url, srv.pid(), srv.log)
		}
	}
	if !f.headless {
		return runDemoWorkbench(ctx, cmd, g, d, f)
	}
	dur := f.dur
	if dur <= 0 {
		dur = 60 * time.Second
	}
	sum, err := d.Run(ctx, dur)
	if err != nil {
		return err
	}
	rep := report(d, f, sum)
	if cerr := d.Close(); cerr != nil {
		fmt.Fprintln(cmd.ErrOrStderr(), "steward: demo clean-up:", cerr)
	}
	return printOut(out, g.jsonOut, rep, func(w io.Writer) { writeDemoSummary(w, rep) })
}

// demoToken is the token for --gitea-url: from --gitea-token-file, else the deprecated
// --gitea-token, else $STEWARD_GITEA_TOKEN. No token is ever passed to a child process.
func demoToken(f *demoFlags) (string, error) {
	switch {
	case f.giteaTokenFile != "":
		fi, err := os.Stat(f.giteaTokenFile)
		if err != nil {
			return "", fmt.Errorf("--gitea-token-file %s cannot be read (%s)", f.giteaTokenFile, osReason(err))
		}
		if !fi.Mode().IsRegular() {
			return "", fmt.Errorf("--gitea-token-file %s is not a regular file", f.giteaTokenFile)
		}
		if fi.Size() > 4096 {
			return "", fmt.Errorf("--gitea-token-file %s is larger than 4 KiB: it does not hold just a token", f.giteaTokenFile)
		}
		b, err := os.ReadFile(f.giteaTokenFile)
		if err != nil {
			return "", fmt.Errorf("--gitea-token-file %s cannot be read (%s)", f.giteaTokenFile, osReason(err))
		}
		tok := strings.TrimSpace(string(b))
		if tok == "" {
			return "", fmt.Errorf("--gitea-token-file %s is empty", f.giteaTokenFile)
		}
		return tok, nil
	case f.giteaToken != "":
		return f.giteaToken, nil
	}
	return strings.TrimSpace(os.Getenv(gitea.EnvToken)), nil
}

// osReason is an OS error's reason without Go's operation prefix ("stat /x: ").
func osReason(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// runDemoWorkbench runs the fleet in the background while the workbench is open.
func runDemoWorkbench(ctx context.Context, cmd *cobra.Command, g *globals, d *sim.Demo, f *demoFlags) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	dur := f.dur
	if dur <= 0 {
		dur = 24 * time.Hour
	}
	done := make(chan error, 1)
	go func() { _, err := d.Run(ctx, dur); done <- err; cancel() }()
	err := openWorkbench(ctx, cmd, g, d)
	cancel()
	if rerr := <-done; err == nil && rerr != nil && !errors.Is(rerr, context.Canceled) {
		err = rerr
	}
	if f.keep {
		writeKeep(cmd.OutOrStdout(), report(d, f, d.Fleet().Summary()))
	}
	return err
}

func report(d *sim.Demo, f *demoFlags, sum sim.Summary) demoReport {
	r := demoReport{
		GiteaURL:  d.GiteaURL,
		GiteaAddr: d.Addr(),
		Repo:      d.Owner + "/" + d.Repo,
		Kept:      f.keep,
		Env:       d.Env,
		Summary:   sum,
	}
	r.Root, r.AuditLog = d.Root, d.AuditPath
	r.LocksDir, r.DBPath, r.RepoRoot = d.Workspace.LocksDir, d.Workspace.DBPath, d.Workspace.RepoRoot
	if f.keep { // a folder removed on exit has no config to read and no command to run
		r.Config, r.StatusCommand = d.ConfigPath(), d.StatusCommand()
		t := keptTry(context.Background(), d.ConfigPath())
		r.Try = &t
	}
	return r
}

func writeDemoSummary(w io.Writer, r demoReport) {
	s := r.Summary
	fmt.Fprintf(
		w,
		"\nseed %d, %d workers, speed %gx, %s wall\n",
		s.Seed,
		s.Workers,
		s.Speed,
		s.Wall.Round(time.Millisecond),
	)
	kinds := make([]string, 0, len(s.Counts))
	for k := range s.Counts {
		kinds = append(kinds, string(k))
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		first := s.First[sim.EventKind(k)]
		fmt.Fprintf(w, "  %-18s %4d   first after %s\n", k, s.Counts[sim.EventKind(k)], first.Round(time.Millisecond))
	}
	if len(s.Errors) > 0 {
		fmt.Fprintf(w, "errors (the first %d of %d):\n", len(s.Errors), s.Counts[sim.EventError])
		for _, e := range s.Errors {
			fmt.Fprintln(w, "  "+termsafe.Line(e))
		}
	}
	if r.Kept {
		writeKeep(w, r)
	}
}

// writeKeep says where the kept workspace is and prints the one command that inspects it:
// `steward --config <its steward.yaml> status`, the file naming the workspace's paths and
// the lease policy and durations compressed as the demo ran them (no variables to paste).
func writeKeep(w io.Writer, r demoReport) {
	fmt.Fprintf(w, "\nkept the demo workspace in %s\n", r.Root)
	fmt.Fprintf(
		w,
		"  locks:  %s\n  db:     %s\n  repo:   %s\n  audit:  %s\n  config: %s (the workspace, its compressed lease "+
			"policy and durations)\n",
		r.LocksDir,
		r.DBPath,
		r.RepoRoot,
		r.AuditLog,
		r.Config,
	)
	whereSteward(w)
	fmt.Fprintln(w, "inspect it with:")
	fmt.Fprintf(w, "  %s\n", strings.Join(r.StatusCommand, " "))
	if r.Try != nil {
		fmt.Fprintln(
			w,
			"or set it once for every command (the README's examples read $ITEM, $LEASE and $LOCK: a claim the run left):",
		)
		fmt.Fprintf(w, "  %s\n", r.Try.exports())
	}
	if r.GiteaAddr != "" {
		fmt.Fprintln(w, "(the in-process Gitea stopped with the demo; Gitea facts are not available afterwards)")
	}
}
