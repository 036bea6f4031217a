package cli

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"steward/mcp"
	"steward/mcp/mcptest"
)

// TestMCPStdioMalformedJSON: a real `steward mcp` over stdio answers lines that are not
// JSON-RPC messages (not JSON: -32700; JSON of the wrong shape: -32600) and keeps serving
// the calls after them. Before, the SDK's stdio decoder gave up at the first such line: no
// answer, the connection over, the worker's next call lost.
func TestMCPStdioMalformedJSON(t *testing.T) {
	w := newMCPWorkspace(t)
	cmd := exec.Command(realSteward(t), append([]string{"mcp"}, w.flags...)...)
	cmd.Env = cleanEnv(t)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		in.Close()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("steward mcp stderr:\n%s", stderr.String())
		}
	})
	mcptest.StdioMalformed(t, in, out)
	in.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("steward mcp exited with %v after its client closed stdin", err)
	}
}

// TestMCPStdioClaimsUnderTheWorkspacesRemote: a real `steward mcp` on a workspace whose
// gitea.remote is prgs (here from STEWARD_GITEA_REMOTE) claims an item named without a
// remote under prgs — the lease's item and the lock file's name — not origin. (It failed
// before: steward mcp never read the setting, and every default was origin.)
func TestMCPStdioClaimsUnderTheWorkspacesRemote(t *testing.T) {
	w := newMCPWorkspace(t)
	cmd := exec.Command(realSteward(t), append([]string{"mcp"}, w.flags...)...)
	cmd.Env = cleanEnv(t, "STEWARD_GITEA_REMOTE=prgs")
	c, err := mcp.Connect(context.Background(), &sdk.CommandTransport{Command: cmd}, "w1")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	o, err := c.Claim(context.Background(), mcp.ClaimArgs{Item: &mcp.ItemRef{Org: "acme", Repo: "widgets", Number: 3}})
	if err != nil || !o.Success || o.Item.Remote != "prgs" || o.Fence == nil || !strings.HasPrefix(o.Fence.LockFile, "prgs__acme__widgets__issue-3") {
		t.Fatalf("claim: %+v %v", o, err)
	}
}
