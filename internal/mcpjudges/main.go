// Command mcpjudges prepares the workspace the MCP judges (scripts/mcp-judges) drive
// steward mcp on, with steward's own code: the demo's workspace (sim.NewDemo: a migrated
// control-plane DB, a locks directory, an audit log, a backlog of issues) and the demo's
// in-process Gitea subset served on loopback. No worker runs: the judges are the only
// workers. The judges test the MCP surface, so the demo's Gitea stands in for a real one.
//
// It writes a description of the workspace (the steward flags and the environment a steward
// process needs, the Gitea token among them) to -out, mode 0600, prints "ready", and serves
// the Gitea until its stdin closes.
//
//	go run ./internal/mcpjudges -dir DIR -out DIR/workspace.json
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"

	"steward/sim"
)

// Description is what the judges read: how to run steward on the workspace.
type Description struct {
	Root string `json:"root"`
	// Args are steward's global flags naming the workspace.
	Args []string `json:"args"`
	// Env is the environment a steward process needs (KEY=VALUE): the Gitea login and
	// the lease policy. It holds a token: the file is the owner's only.
	Env   []string `json:"env"`
	Owner string   `json:"owner"`
	Repo  string   `json:"repo"`
}

func main() {
	dir := flag.String("dir", "", "the folder the workspace is made in")
	out := flag.String("out", "", "where to write the description (JSON, mode 0600)")
	flag.Parse()
	if err := run(*dir, *out); err != nil {
		fmt.Fprintln(os.Stderr, "mcpjudges:", err)
		os.Exit(1)
	}
}

func run(dir, out string) error {
	if dir == "" || out == "" {
		return fmt.Errorf("-dir and -out are required")
	}
	// Real-time lease policy (speed 1): a judge's lease never expires under it.
	d, err := sim.NewDemo(
		context.Background(),
		sim.DemoOptions{Parent: dir, Issues: 16, Workers: 1, Speed: 1, Seed: 7, NoStaff: true, Legacy: -1},
	)
	if err != nil {
		return err
	}
	defer d.Close()
	ws := d.Workspace
	desc := Description{Root: d.Root, Owner: d.Owner, Repo: d.Repo, Env: d.StewardEnv(),
		Args: []string{"--locks", ws.LocksDir, "--db", ws.DBPath, "--repo-root", ws.RepoRoot, "--audit", d.AuditPath}}
	b, err := json.MarshalIndent(desc, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(out, b, 0o600); err != nil {
		return err
	}
	fmt.Println("ready")
	_, _ = io.Copy(io.Discard, os.Stdin)
	return nil
}
