package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"steward/gitea/giteatest"
	"steward/leases"
	"steward/leases/pgtest"
	"steward/mcp"
)

// The test binary doubles as two programs for the MCP tests: re-executed with
// STEWARD_TEST_AS=steward it is steward (cli.Main, as main.go runs it), optionally with a
// crash hook at one step of an apply; with STEWARD_TEST_AS=mcp-client it is a worker that
// starts its own steward mcp over stdio and claims one item.
func TestMain(m *testing.M) {
	switch os.Getenv("STEWARD_TEST_AS") {
	case "steward":
		leases.OnlyOwnWriters() // as main.go
		setCrashHook()
		if d, err := time.ParseDuration(os.Getenv("STEWARD_TEST_RESYNC")); err == nil {
			watchTuning.Resync = d
		}
		os.Exit(Main(os.Args[1:], os.Stdout, os.Stderr))
	case "mcp-client":
		os.Exit(mcpClientMain())
	}
	// In-process commands read the configuration and the audit log from these: never a
	// developer's own.
	private, err := os.MkdirTemp("", "steward-cli-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	os.Setenv("XDG_CONFIG_HOME", filepath.Join(private, "config"))
	os.Setenv("XDG_STATE_HOME", filepath.Join(private, "state"))
	code := giteatest.Main(m)
	pgtest.Stop()
	os.RemoveAll(private)
	if stewardBinDir != "" {
		os.RemoveAll(stewardBinDir)
	}
	os.Exit(code)
}

// setCrashHook stops an apply at STEWARD_TEST_CRASH_STEP: it writes this process's pid
// into the FIFO STEWARD_TEST_CRASH_MARK (blocking until the test reads it), then waits for
// the FIFO STEWARD_TEST_CRASH_GO to be opened and closed — or, without one, forever (the
// test kills it).
func setCrashHook() {
	step := os.Getenv("STEWARD_TEST_CRASH_STEP")
	if step == "" {
		return
	}
	coreStep = func(s string) {
		if s != step {
			return
		}
		if f, err := os.OpenFile(os.Getenv("STEWARD_TEST_CRASH_MARK"), os.O_WRONLY, 0); err == nil {
			fmt.Fprintf(f, "%d\n", os.Getpid())
			f.Close()
		}
		goFIFO := os.Getenv("STEWARD_TEST_CRASH_GO")
		if goFIFO == "" {
			select {}
		}
		if f, err := os.Open(goFIFO); err == nil {
			_, _ = io.Copy(io.Discard, f)
			f.Close()
		}
	}
}

// mcpClientMain is a worker: it starts `STEWARD_TEST_SERVER_ARGS` (a JSON argv) as its
// stdio MCP server, sharing its stderr, says "calling" on stdout and claims item
// STEWARD_TEST_ITEM as session STEWARD_TEST_SESSION, printing the outcome.
func mcpClientMain() int {
	var argv []string
	if err := json.Unmarshal([]byte(os.Getenv("STEWARD_TEST_SERVER_ARGS")), &argv); err != nil || len(argv) == 0 {
		fmt.Fprintln(os.Stderr, "mcp-client: bad STEWARD_TEST_SERVER_ARGS")
		return 2
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "STEWARD_TEST_AS=steward")
	cmd.Stderr = os.Stderr
	ctx := context.Background()
	c, err := mcp.Connect(ctx, &sdk.CommandTransport{Command: cmd}, os.Getenv("STEWARD_TEST_SESSION"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "mcp-client:", err)
		return 2
	}
	var it mcp.ItemRef
	if err := json.Unmarshal([]byte(os.Getenv("STEWARD_TEST_ITEM")), &it); err != nil {
		fmt.Fprintln(os.Stderr, "mcp-client: bad STEWARD_TEST_ITEM")
		return 2
	}
	fmt.Println("calling")
	o, err := c.Claim(ctx, mcp.ClaimArgs{Item: &it})
	if err != nil {
		fmt.Fprintln(os.Stderr, "mcp-client:", err)
		return 2
	}
	b, _ := json.Marshal(o)
	fmt.Println(string(b))
	c.Close()
	return 0
}

var (
	stewardBinOnce sync.Once
	stewardBinDir  string
	stewardBin     string
	stewardBinErr  error
)

// realSteward builds the steward binary once per test binary (go build of the module's
// main package) for the tests that run a real `steward mcp`.
func realSteward(t testing.TB) string {
	t.Helper()
	stewardBinOnce.Do(func() {
		_, file, _, _ := runtime.Caller(0)
		root := filepath.Dir(filepath.Dir(file))
		stewardBinDir, stewardBinErr = os.MkdirTemp("", "steward-bin-")
		if stewardBinErr != nil {
			return
		}
		stewardBin = filepath.Join(stewardBinDir, "steward")
		out, err := exec.Command("go", "build", "-C", root, "-o", stewardBin, ".").CombinedOutput()
		if err != nil {
			stewardBinErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if stewardBinErr != nil {
		t.Fatal(stewardBinErr)
	}
	return stewardBin
}

// cleanEnv is the environment without steward's and Gitea's own variables (a developer's
// real workspace must never leak into a test), with a private config directory.
func cleanEnv(t testing.TB, extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "STEWARD_") || strings.HasPrefix(k, "GITEA_") || k == "XDG_CONFIG_HOME" || k == "XDG_STATE_HOME" {
			continue
		}
		env = append(env, kv)
	}
	return append(append(env, "XDG_CONFIG_HOME="+t.TempDir(), "XDG_STATE_HOME="+t.TempDir()), extra...)
}
