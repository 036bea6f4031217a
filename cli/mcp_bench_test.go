package cli

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"steward/govern"
	"steward/mcp"
)

// BenchmarkWorkerCycle measures a worker's claim + heartbeat + release round trip through a
// real steward binary two ways in the same run, interleaved so both see the same load: over
// one long-lived `steward mcp` on stdio (three tool calls), and through the command line
// (three `steward` processes, each opening the workspace, as a shell-driven worker does). It
// reports cycles per second of each and their ratio (docs/performance.md). Run it briefly:
//
//	go test -run '^$' -bench BenchmarkWorkerCycle -benchtime 30x ./cli/
func BenchmarkWorkerCycle(b *testing.B) {
	bin := realSteward(b)
	ctx := context.Background()
	viaMCP, viaCLI := newMCPWorkspace(b), newMCPWorkspace(b)
	cmd := exec.Command(bin, append([]string{"mcp"}, viaMCP.flags...)...)
	cmd.Env = cleanEnv(b)
	c, err := mcp.Connect(ctx, &sdk.CommandTransport{Command: cmd}, "bench-w1")
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	cli := func(args ...string) govern.Outcome {
		b.Helper()
		x := exec.Command(bin, append(append(args, "--json", "--session", "bench-w2"), viaCLI.flags...)...)
		x.Env = cleanEnv(b)
		out, err := x.Output()
		var o govern.Outcome
		if err != nil || json.Unmarshal(out, &o) != nil || o.Result != govern.ResultSucceeded {
			b.Fatalf("steward %v: %v\n%s", args, err, out)
		}
		return o
	}
	var tMCP, tCLI time.Duration
	b.ResetTimer()
	for i := range b.N {
		n := int64(i + 1)
		start := time.Now()
		cl, err := c.Claim(ctx, mcp.ClaimArgs{Item: &mcp.ItemRef{Org: "acme", Repo: "widgets", Number: n}})
		if err != nil || !cl.Success {
			b.Fatalf("claim: %+v %v", cl, err)
		}
		hb, err := c.Heartbeat(ctx, *cl.Fence)
		if err != nil || !hb.Success {
			b.Fatalf("heartbeat: %+v %v", hb, err)
		}
		if rel, err := c.Release(ctx, *hb.Fence); err != nil || !rel.Success {
			b.Fatalf("release: %+v %v", rel, err)
		}
		tMCP += time.Since(start)

		start = time.Now()
		o := cli("claim", "--org", "acme", "--repo", "widgets", "--number", strconv.FormatInt(n, 10))
		d := o.Detail
		h := cli("heartbeat", "--lease", d["lease_id"], "--expect-expires-at", d["expires_at"],
			"--expect-lock-generation", d["lock_generation"], "--expect-task-session", d["task_session_id"])
		cli("release", "--lease", d["lease_id"], "--expect-expires-at", h.Detail["expires_at"],
			"--expect-lock-generation", h.Detail["lock_generation"], "--expect-task-session", d["task_session_id"])
		tCLI += time.Since(start)
	}
	b.StopTimer()
	mcpRate, cliRate := float64(b.N)/tMCP.Seconds(), float64(b.N)/tCLI.Seconds()
	b.ReportMetric(mcpRate, "mcp-cycles/s")
	b.ReportMetric(cliRate, "cli-cycles/s")
	b.ReportMetric(mcpRate/cliRate, "mcp/cli")
	if load, err := os.ReadFile("/proc/loadavg"); err == nil {
		b.Logf("load average at the end: %s", strings.TrimSpace(string(load)))
	}
}
