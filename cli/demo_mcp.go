package cli

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"steward/mcp"
	"steward/sim"
)

// workersFlag is --workers: a count of in-process workers, or "mcp" / "mcp:N" for workers
// that are MCP clients of a steward mcp process.
type workersFlag struct {
	n   int
	mcp bool
}

func (w *workersFlag) String() string {
	if w.mcp {
		return "mcp:" + strconv.Itoa(w.n)
	}
	return strconv.Itoa(w.n)
}

func (w *workersFlag) Set(s string) error {
	mode, count, hasCount := strings.Cut(strings.TrimSpace(s), ":")
	n := 8
	switch {
	case mode == "mcp":
		w.mcp = true
	case !hasCount:
		w.mcp, count, hasCount = false, mode, true
	case mode == "core":
		w.mcp = false
	default:
		return fmt.Errorf("want a number, mcp or mcp:N, got %q", s)
	}
	if hasCount {
		v, err := strconv.Atoi(count)
		if err != nil || v <= 0 {
			return fmt.Errorf("want a positive number of workers, got %q", count)
		}
		n = v
	}
	w.n = n
	return nil
}

func (w *workersFlag) Type() string { return "workers" }

// demoMCP is the steward mcp process the demo's MCP workers talk to.
type demoMCP struct {
	cmd   *exec.Cmd
	url   string
	token string
	log   string
	done  chan struct{}
}

func (s *demoMCP) pid() int { return s.cmd.Process.Pid }

// startDemoMCP starts `steward mcp --http 127.0.0.1:0` (this executable) on the demo's
// workspace: the role the demo's workers have, a bearer token in a 0600 file in the demo's
// folder (read by the server from the file, by the clients from memory), the demo's Gitea
// login and compressed lease policy through the environment. Its log goes to mcp.log in
// the folder; it dies with the demo.
func startDemoMCP(ctx context.Context, d *sim.Demo) (*demoMCP, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("demo: find steward's executable: %w", err)
	}
	var b [24]byte
	_, _ = rand.Read(b[:])
	s := &demoMCP{token: hex.EncodeToString(b[:]), log: filepath.Join(d.Root, "mcp.log"), done: make(chan struct{})}
	tokenFile := filepath.Join(d.Root, "mcp.token")
	if err := os.WriteFile(tokenFile, []byte(s.token+"\n"), 0o600); err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	logf, err := os.OpenFile(s.log, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	defer logf.Close()
	ws := d.Workspace
	s.cmd = exec.Command(
		exe,
		"mcp",
		"--http",
		"127.0.0.1:0",
		"--token-file",
		tokenFile,
		"--locks",
		ws.LocksDir,
		"--db",
		ws.DBPath,
		"--repo-root",
		ws.RepoRoot,
		"--audit",
		d.AuditPath,
		"--as-role",
		"operator",
	)
	s.cmd.Env = append(os.Environ(), d.StewardEnv()...)
	s.cmd.Stderr = logf
	s.cmd.SysProcAttr = childAttr()
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("demo: start steward mcp: %w", err)
	}
	go func() { _ = s.cmd.Wait(); close(s.done) }()
	lines := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(out).ReadString('\n')
		lines <- line
	}()
	select {
	case line := <-lines:
		url, ok := strings.CutPrefix(strings.TrimSpace(line), "mcp ")
		if !ok {
			s.stop()
			return nil, fmt.Errorf("demo: steward mcp did not start (see %s)", s.log)
		}
		s.url = url
	case <-ctx.Done():
		s.stop()
		return nil, ctx.Err()
	case <-time.After(30 * time.Second):
		s.stop()
		return nil, fmt.Errorf("demo: steward mcp did not start within 30s (see %s)", s.log)
	}
	return s, nil
}

// An MCP client is a simulated worker's hands.
var _ sim.Hands = (*mcp.Client)(nil)

// hands connects one worker process to the server.
func (s *demoMCP) hands(ctx context.Context, worker, session string, pid int) (sim.Hands, error) {
	return mcp.Connect(ctx, mcp.HTTPTransport(s.url, s.token), session)
}

// stop ends the server (SIGTERM: it finishes what it is applying) and waits for it.
func (s *demoMCP) stop() {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
}
