package cli

import (
	"context"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"steward/app"
	"steward/model"
	"steward/tui"
)

// addUICommand adds `steward ui`: the workbench on the workspace the global flags name.
func addUICommand(root *cobra.Command, g *globals) {
	var noGitea, all bool
	cmd := &cobra.Command{
		Use:   "ui",
		Short: "Open the workbench on the workspace (live snapshot, actions through the governed core)",
		Long: `ui opens the workbench on the workspace the global flags and the config file name.

With --all it opens every workspace of the config file (workspaces:), each with its own
live model and governed core, and the "all" view that draws every workspace's rows under a
Workspace column. W switches between them; in the all view, > opens a row in its own
workspace, where its actions go to that workspace's core (the all view acts on nothing).
It starts on the workspace --workspace names, else on the all view.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if all {
				return runUIAll(cmd.Context(), g, noGitea)
			}
			return runUI(cmd.Context(), g, noGitea)
		},
	}
	cmd.Flags().BoolVar(&noGitea, "no-gitea", false, "do not read Gitea")
	cmd.Flags().BoolVar(&all, "all", false, "open every workspace of the config file, with the all view (W switches)")
	root.AddCommand(cmd)
}

// runUI opens the workspace session (app.Open) and runs the workbench on it until the user
// quits or the process is interrupted.
func runUI(ctx context.Context, g *globals, noGitea bool) error {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
	defer stop()
	sess, err := openUI(ctx, g, noGitea)
	if err != nil {
		return err
	}
	defer sess.Close()
	return tui.Run(ctx, sess.Workbench)
}

// openUI opens the workbench's session and starts its feed: the live model's watch, or —
// when there is nothing to watch (no lock directory) — reads every few seconds and a notice
// saying what is wrong and what to do, so that `steward ui` opens instead of exiting.
func openUI(ctx context.Context, g *globals, noGitea bool) (*app.Session, error) {
	s, err := g.settings()
	if err != nil {
		return nil, err
	}
	s.Audit, s.Gitea.Off, s.Warn, s.Step = app.AuditWrite, noGitea, os.Stderr, coreStep
	s.History = &app.History{StateDir: defaultStateDir(), SinceOnStart: true}
	sess, err := app.Open(ctx, s)
	if err != nil {
		return nil, err
	}
	sess.KeepAttention()
	if err := sess.Watch(ctx); err != nil {
		first := sess.Poll(ctx, 5*time.Second)
		sess.Workbench.Notice = noWorkspaceNotice(g, first, err)
		sess.Workbench.SinceOnStart = false // "since you left" of nothing read would hide the notice
	}
	return sess, nil
}

// noWorkspaceNotice says why the workbench sees no workspace and what to do: the three ways
// to one — a config file, the flags, the demo — then the sources it could not read.
func noWorkspaceNotice(g *globals, s *model.Snapshot, watchErr error) *tui.Notice {
	cfg := "no config file"
	if r := g.resolved; r != nil && r.Found {
		cfg = "the config file " + r.Path
	} else if r != nil {
		cfg = "no config file (looked at " + r.Path + ")"
	}
	n := &tui.Notice{Title: "Nothing to watch here: no lock directory at " + g.locksDir}
	n.Lines = append(
		n.Lines,
		"steward read "+cfg+". To watch a workspace:",
		"• steward config init — writes a commented config file: set locks_dir and db_path to the workers' own, then "+
			"steward ui",
		"• steward --config FILE ui — a config file naming the workspace",
		"• steward --locks DIR --db FILE ui — the workers' lock directory and control-plane DB",
		"• steward demo — a lively demo workspace to try the workbench on",
		"",
		"This workbench reads again every 5 s (r: now) and fills in once the sources are there. What could not be read:",
	)
	for _, x := range []struct {
		name string
		h    model.SourceHealth
	}{{"locks", s.Sources.Locks}, {"db", s.Sources.DB}, {"gitea", s.Sources.Gitea}} {
		if x.h.Status != model.StatusOK {
			n.Lines = append(n.Lines, "• "+x.name+" "+strings.ReplaceAll(string(x.h.Status), "_", " ")+": "+x.h.Reason)
		}
	}
	n.Lines = append(n.Lines, "• watching the lock directory: "+watchErr.Error())
	return n
}

// runUIAll opens every workspace of the config file (config.LoadAll, each through the one
// assembly: app.OpenAll) and runs the workbench over all of them, starting on the workspace
// --workspace names, else on the all view.
func runUIAll(ctx context.Context, g *globals, noGitea bool) error {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
	defer stop()
	all, err := allSettings(g)
	if err != nil {
		return err
	}
	start := len(all)
	secrets := g.secrets()
	for i := range all {
		if all[i].Workspace == g.workspace && g.workspace != "" {
			start = i
		}
	}
	for i := range all {
		all[i].Audit, all[i].Gitea.Off, all[i].Warn, all[i].Step = app.AuditWrite, noGitea, os.Stderr, coreStep
		all[i].Secrets = secrets
		if g.readOnly { // asking for read-only is always granted, in every workspace
			all[i].ReadOnly, all[i].ReadOnlyReason = true, g.readOnlyWhy
		}
		all[i].History = &app.History{StateDir: defaultStateDir(), SinceOnStart: i == start}
	}
	sessions, err := app.OpenAll(ctx, all)
	if err != nil {
		return err
	}
	defer app.CloseAll(sessions)
	ws := make([]tui.Workspace, len(sessions))
	for i, sess := range sessions {
		sess.KeepAttention()
		if err := sess.Watch(ctx); err != nil {
			return err
		}
		ws[i] = tui.Workspace{Name: sess.Name(), Host: all[i].Host, Options: sess.Workbench}
	}
	return tui.RunWorkspaces(ctx, ws, start)
}
