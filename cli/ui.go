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
	var noGitea bool
	cmd := &cobra.Command{
		Use:   "ui",
		Short: "Open the workbench on the workspace (live snapshot, actions through the governed core)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runUI(cmd.Context(), g, noGitea)
		},
	}
	cmd.Flags().BoolVar(&noGitea, "no-gitea", false, "do not read Gitea")
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
	if err := sess.Watch(ctx); err != nil {
		return err
	}
	return tui.Run(ctx, sess.Workbench)
}
