package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"steward/sim"
)

// openWorkbench opens the workbench on the demo workspace. Until the workbench (tui.Run)
// lands, it says so and keeps the simulation running headless until interrupted.
func openWorkbench(ctx context.Context, cmd *cobra.Command, d *sim.Demo) error {
	fmt.Fprintln(cmd.ErrOrStderr(), "steward demo: the workbench (tui) is not built into this steward yet; the simulation runs without it.")
	fmt.Fprintf(cmd.ErrOrStderr(), "workspace: %s — press Ctrl-C to stop (or run `steward demo --headless`).\n", d.Root)
	<-ctx.Done()
	return nil
}
