package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"steward/config"
	"steward/mcp"
)

// coreStep, when set (by crash tests only), is called at each boundary of an apply.
var coreStep func(string)

func addMCPCommand(root *cobra.Command, g *globals) {
	var httpAddr, tokenFile string
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve the worker tools (claim, heartbeat, release, ask, status) over MCP",
		Long: `mcp serves steward's worker tools to LLM workers over the Model Context Protocol: claim,
heartbeat, release, ask, get_answer, my_leases, item_status and inspect_lock_contract, and the
seed's names for the same jobs. Every mutation goes through the governed core as on the command
line — the same guards, fences, refusal codes and audit records — as the worker's session.

Without --http it speaks MCP over stdin and stdout (register the command with an MCP client);
the process that started it is the worker, bound to every claim it makes. With --http it
serves streamable HTTP at /mcp, on loopback unless --token-file names a file (mode 0600)
holding a bearer token every request must carry. The token is never read from the command
line. See docs/mcp.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runMCP(cmd, g, httpAddr, tokenFile) },
	}
	cmd.Flags().
		StringVar(&httpAddr, "http", "", "serve streamable HTTP on host:port (e.g. 127.0.0.1:8765) instead of stdio")
	cmd.Flags().
		StringVar(&tokenFile, "token-file", "", "with --http: a file (mode 0600) holding the bearer token; required "+
			"beyond loopback")
	root.AddCommand(cmd)
}

func runMCP(cmd *cobra.Command, g *globals, httpAddr, tokenFile string) error {
	var l *mcp.HTTPListener
	switch {
	case httpAddr != "":
		var err error
		if l, err = mcp.ListenHTTP(httpAddr, tokenFile); err != nil {
			return &exitError{code: ExitError, msg: "steward mcp: " + err.Error()}
		}
		defer l.Close()
	case tokenFile != "":
		return &exitError{code: ExitError, msg: "steward mcp: --token-file goes with --http"}
	}
	c, done, err := g.core()
	if err != nil {
		return err
	}
	defer done()
	defer c.Close()
	var clientPID int64
	if l == nil {
		clientPID = int64(os.Getppid())
	}
	var remote string
	if g.resolved != nil {
		// The workspace's remote (gitea.remote) is what its workers name an item by.
		remote = strings.TrimSpace(g.resolved.Get(config.KeyGiteaRemote).Value)
	}
	srv := mcp.New(mcp.Config{Core: c, ClientPID: clientPID, Remote: remote, Version: version()})
	defer srv.Close()
	base := cmd.Context()
	if base == nil {
		base = context.Background()
	}
	ctx, stop := signal.NotifyContext(base, os.Interrupt, syscall.SIGTERM)
	defer stop()
	if l == nil {
		return srv.ServeStdio(ctx, io.NopCloser(cmd.InOrStdin()), nopWriteCloser{cmd.OutOrStdout()})
	}
	auth := "no token (loopback only)"
	if l.Authenticated() {
		auth = "bearer token required"
	}
	fmt.Fprintf(cmd.OutOrStdout(), "mcp %s\n", l.URL())
	fmt.Fprintf(cmd.ErrOrStderr(), "steward mcp: serving streamable HTTP at %s (%s); stop with ctrl+c\n", l.URL(), auth)
	if err := srv.ServeHTTP(ctx, l); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// version is the module version the binary was built from ("dev" in a work tree).
func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}
