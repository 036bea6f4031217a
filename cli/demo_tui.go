package cli

import (
	"context"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"steward/app"
	"steward/config"
	"steward/govern"
	"steward/sim"
	"steward/tui"
)

// demoWorkbench is the workspace session (app.Open) the workbench runs on in a demo: the
// live model of the demo's workspace and a core for the person at the keyboard (sharing
// the demo's audit log), its snapshots annotated by the core and redacted like `steward
// ui`'s.
type demoWorkbench struct {
	sess *app.Session
	opts tui.Options
}

// newDemoWorkbench opens the session on d. Durations the model judges by (stale PRs, the
// refused-claim window) and attention's SLAs (demoAttention) are compressed like the lease
// policy; the theme is the configuration's. The demo's workspace lives for one run: its last-seen mark
// is kept beside it, and "since you left" opens on a key (L), not at start.
func newDemoWorkbench(
	ctx context.Context,
	d *sim.Demo,
	role govern.Role,
	ro govern.Options,
	theme string,
) (*demoWorkbench, error) {
	speed := d.Speed()
	scale := func(x time.Duration) time.Duration { return time.Duration(float64(x) / speed) }
	sess, err := app.Open(ctx, app.Settings{
		LocksDir: d.Workspace.LocksDir, DBPath: d.Workspace.DBPath, DBPasswordFile: d.Workspace.DBPasswordFile,
		RepoRoot:  d.Workspace.RepoRoot,
		AuditPath: d.AuditPath, AuditLog: d.AuditLog(), Audit: app.AuditWrite, Env: d.Workspace.Env,
		Gitea:   app.Gitea{Client: d.Client, Remote: d.Remote},
		StalePR: scale(10 * time.Minute), ContentionWindow: scale(time.Hour),
		Attention: demoAttention(speed),
		Theme:     theme,
		History:   &app.History{StateDir: filepath.Join(filepath.Dir(d.AuditPath), "state")},
		Role:      role, ReadOnly: ro.ReadOnly, ReadOnlyReason: ro.ReadOnlyReason,
		Tuning: app.Tuning{
			GiteaEvery:    2 * time.Second,
			ProbeEvery:    time.Second,
			WorktreeEvery: time.Second,
			Resync:        5 * time.Second,
		},
	})
	if err != nil {
		return nil, err
	}
	sess.KeepAttention()
	if err := sess.Watch(ctx); err != nil {
		sess.Close()
		return nil, err
	}
	wb := &demoWorkbench{sess: sess, opts: sess.Workbench}
	wb.opts.Attention.Snooze = demoSnoozes
	return wb, nil
}

func (w *demoWorkbench) close() { _ = w.sess.Close() }

// openWorkbench opens the workbench on the demo workspace until the user quits or ctx ends.
func openWorkbench(ctx context.Context, cmd *cobra.Command, g *globals, d *sim.Demo) error {
	// The demo's person is an operator unless --as-role says otherwise (g.role is already
	// capped by the configuration); the configured ceiling and read-only apply here too.
	role := govern.RoleOperator
	if f := cmd.Flags().Lookup("as-role"); f != nil && f.Changed {
		r, err := govern.ParseRole(g.role)
		if err != nil {
			return err
		}
		role = r
	}
	if g.ceiling != "" {
		if c, err := govern.ParseRole(g.ceiling); err == nil && role > c {
			role = c
		}
	}
	theme := ""
	if g.resolved != nil {
		theme = g.resolved.Get(config.KeyTheme).Value
	}
	wb, err := newDemoWorkbench(ctx, d, role, govern.Options{ReadOnly: g.readOnly, ReadOnlyReason: g.readOnlyWhy}, theme)
	if err != nil {
		return err
	}
	defer wb.close()
	if err := g.demoNotifySettings(&wb.opts.Attention); err != nil {
		return &exitError{code: ExitError, msg: err.Error()}
	}
	return tui.Run(ctx, wb.opts)
}
