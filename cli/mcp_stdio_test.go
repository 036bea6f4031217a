package cli

import (
	"os/exec"
	"strings"
	"testing"

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
