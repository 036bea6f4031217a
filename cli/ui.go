package cli

import (
	"context"
	"os"
	"os/signal"
	"strings"

	"github.com/spf13/cobra"

	"steward/attention"
	"steward/config"
	"steward/govern"
	"steward/leases"
	"steward/model"
	"steward/model/live"
	"steward/tui"
)

// addUICommand adds `steward ui`: the workbench on the workspace the global flags name.
func addUICommand(root *cobra.Command, g *globals) {
	root.AddCommand(&cobra.Command{
		Use:   "ui",
		Short: "Open the workbench on the workspace (live snapshot, actions through the governed core)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runUI(cmd.Context(), g)
		},
	})
}

// runUI builds the live model and the governed core from the global flags and runs the
// workbench until the user quits or the process is interrupted.
func runUI(ctx context.Context, g *globals) error {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
	defer stop()
	core, closeAudit, err := g.core()
	if err != nil {
		return err
	}
	defer closeAudit()
	defer core.Close()
	pol := leases.LoadPolicies(os.LookupEnv)
	cfg := model.Config{Policies: pol}
	var gf live.GiteaFacts
	if g.gitea.repo != "" {
		cfg.Org, cfg.Repo, _ = strings.Cut(g.gitea.repo, "/")
		if c, err := g.giteaClient(os.Stderr); err == nil && c != nil {
			gf = c
		}
	}
	live := live.New(g.modelWorkspace(), live.Options{Config: cfg, Gitea: gf})
	if err := live.Start(ctx); err != nil {
		return err
	}
	defer live.Close()
	src := &annotated{live: live, core: core, secrets: g.secrets(), out: make(chan *model.Snapshot, 1)}
	go src.run(ctx)
	set, err := g.attentionSettings()
	if err != nil {
		return &exitError{code: ExitError, msg: err.Error()}
	}
	opts := tui.Options{Core: core, Source: src, AuditPath: g.audit, Policies: &pol, ClarificationSLA: set.SLAs.Clarification,
		Attention: tui.AttentionOptions{SLAs: set.SLAs, Reescalations: set.Reescalations, Bell: set.Bell, Desktop: set.Desktop,
			Mux: attention.DetectMux(os.Getenv), Command: set.Command}}
	if g.resolved != nil {
		opts.Theme = g.resolved.Get(config.KeyTheme).Value // dark, light or auto
	}
	g.historyOptions(&opts, g.historySources(), DefaultStateDir(), true)
	return tui.Run(ctx, opts)
}

// annotated forwards the live model's snapshots with every orphan's action previewed by the
// core (allowed or the refusal), off the UI goroutine.
type annotated struct {
	live    *live.Model
	core    *govern.Core
	secrets *govern.Redactor // steward's own token never reaches the screen
	out     chan *model.Snapshot
}

func (a *annotated) Snapshots() <-chan *model.Snapshot { return a.out }

func (a *annotated) Refresh() { a.live.Refresh() }

func (a *annotated) run(ctx context.Context) {
	defer close(a.out)
	// Annotations and redaction look only at entries new since the previous snapshot.
	ann, red := a.core.NewAnnotator(), a.secrets.NewStream()
	for {
		select {
		case <-ctx.Done():
			return
		case s, ok := <-a.live.Snapshots():
			if !ok {
				return
			}
			s = red.Snapshot(ann.Snapshot(ctx, s))
			select {
			case a.out <- s:
			case <-ctx.Done():
				return
			}
		}
	}
}
