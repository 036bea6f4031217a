package cli

import (
	"context"
	"os"
	"os/signal"

	"github.com/spf13/cobra"

	"steward/app"
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
	s, err := g.settings()
	if err != nil {
		return err
	}
	s.Audit, s.Gitea.Off, s.Warn, s.Step = app.AuditWrite, noGitea, os.Stderr, coreStep
	s.History = &app.History{StateDir: DefaultStateDir(), SinceOnStart: true}
	sess, err := app.Open(ctx, s)
	if err != nil {
		return err
	}
	defer sess.Close()
	sess.KeepAttention()
	if err := sess.Watch(ctx); err != nil {
		return err
	}
	return tui.Run(ctx, sess.Workbench)
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
		all[i].History = &app.History{StateDir: DefaultStateDir(), SinceOnStart: i == start}
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
