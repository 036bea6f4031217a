package cli

import (
	"context"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"steward/govern"
	"steward/history/gather"
	"steward/leases"
	"steward/model"
	"steward/model/live"
	"steward/sim"
	"steward/tui"
)

// demoWorkbench is what the workbench needs on a demo: a live model of the workspace and
// a core for the person at the keyboard (sharing the demo's audit log).
type demoWorkbench struct {
	live *live.Model
	opts tui.Options
}

// newDemoWorkbench starts the live model on d. Durations the model judges by (stale PRs,
// the refused-claim window, the clarification SLA) are compressed like the lease policy.
func newDemoWorkbench(ctx context.Context, d *sim.Demo, role govern.Role, ro govern.Options) (*demoWorkbench, error) {
	pol := leases.LoadPolicies(d.Workspace.Env)
	speed := d.Speed()
	scale := func(x time.Duration) time.Duration { return time.Duration(float64(x) / speed) }
	live := live.New(live.Workspace{LocksDir: d.Workspace.LocksDir, DBPath: d.Workspace.DBPath, DBPasswordFile: d.Workspace.DBPasswordFile, RepoRoot: d.Workspace.RepoRoot},
		live.Options{
			Config: model.Config{Policies: pol, Org: d.Owner, Repo: d.Repo,
				StalePRQuiet: scale(10 * time.Minute), RefusedWindow: scale(time.Hour)},
			Gitea: d.Client, GiteaEvery: 2 * time.Second, ProbeEvery: time.Second, WorktreeEvery: time.Second, Resync: 5 * time.Second,
		})
	if err := live.Start(ctx); err != nil {
		return nil, err
	}
	core := govern.New(d.Workspace, d.AuditLog(), govern.Options{Actor: govern.LocalActor(role, ""), ReadOnly: ro.ReadOnly, ReadOnlyReason: ro.ReadOnlyReason})
	opts := tui.Options{Core: core, Source: live, AuditPath: d.AuditPath, Policies: &pol, ClarificationSLA: scale(time.Hour)}
	// The demo's workspace lives for one run: its last-seen mark is kept beside it, and
	// "since you left" opens on a key (L), not at start.
	src := gather.Sources{LocksDir: d.Workspace.LocksDir, DB: leases.Target{Loc: d.Workspace.DBPath}, AuditPath: d.AuditPath}
	(&globals{}).historyOptions(&opts, src, filepath.Join(filepath.Dir(d.AuditPath), "state"), false)
	return &demoWorkbench{live: live, opts: opts}, nil
}

func (w *demoWorkbench) close() {
	_ = w.live.Close()
	_ = w.opts.Core.Close()
}

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
	wb, err := newDemoWorkbench(ctx, d, role, govern.Options{ReadOnly: g.readOnly, ReadOnlyReason: g.readOnlyWhy})
	if err != nil {
		return err
	}
	defer wb.close()
	return tui.Run(ctx, wb.opts)
}
