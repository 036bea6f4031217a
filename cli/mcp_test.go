package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"steward/govern"
	"steward/leases"
	"steward/leases/leaserec"
	"steward/locks"
	"steward/mcp"
	"steward/mcp/mcptest"
)

// mcpWorkspace is an empty workspace and the global flags naming it.
type mcpWorkspace struct {
	ws    govern.Workspace
	audit string
	flags []string
	// extra is what steward mcp gets besides a clean environment (a Gitea login).
	extra []string
}

func newMCPWorkspace(t testing.TB) mcpWorkspace {
	t.Helper()
	dir := t.TempDir()
	ws := govern.Workspace{LocksDir: filepath.Join(dir, "locks"), DBPath: filepath.Join(dir, "cp.sqlite3"), RepoRoot: filepath.Join(dir, "repo")}
	if err := govern.InitWorkspace(ws); err != nil {
		t.Fatal(err)
	}
	audit := filepath.Join(dir, "audit.jsonl")
	return mcpWorkspace{ws: ws, audit: audit, flags: []string{"--locks", ws.LocksDir, "--db", ws.DBPath, "--repo-root", ws.RepoRoot,
		"--audit", audit, "--as-role", "operator"}}
}

func (w mcpWorkspace) env(dial func(t *testing.T, session string) *mcp.Client) mcptest.Env {
	return mcptest.Env{Dial: dial, LocksDir: w.ws.LocksDir, DBPath: w.ws.DBPath, AuditPath: w.audit, Org: "acme", Repo: "widgets"}
}

// stdio dials a real steward mcp subprocess per connection (each client starts its own
// server over stdio, as an MCP client does).
func (w mcpWorkspace) stdio(t *testing.T) mcptest.Env {
	bin := realSteward(t)
	return w.env(func(t *testing.T, session string) *mcp.Client {
		t.Helper()
		cmd := exec.Command(bin, append([]string{"mcp"}, w.flags...)...)
		cmd.Env = cleanEnv(t, w.extra...)
		c, err := mcp.Connect(context.Background(), &sdk.CommandTransport{Command: cmd}, session)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	})
}

// serveHTTP starts a real `steward mcp --http` on a free loopback port and returns its URL
// (from the line it prints first) and the process.
func serveHTTP(t *testing.T, bin string, env []string, args ...string) (string, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"mcp", "--http", "127.0.0.1:0"}, args...)...)
	cmd.Env = env
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
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("steward mcp --http stderr:\n%s", stderr.String())
		}
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	url, ok := strings.CutPrefix(strings.TrimSpace(line), "mcp ")
	if err != nil || !ok || !strings.HasPrefix(url, "http://127.0.0.1:") {
		_ = cmd.Process.Kill()
		t.Fatalf("steward mcp --http printed %q (%v)", line, err)
	}
	return url, cmd
}

func (w mcpWorkspace) http(t *testing.T, token string) mcptest.Env {
	bin := realSteward(t)
	args := append([]string{}, w.flags...)
	if token != "" {
		f := filepath.Join(t.TempDir(), "token")
		if err := os.WriteFile(f, []byte(token+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		args = append(args, "--token-file", f)
	}
	url, _ := serveHTTP(t, bin, cleanEnv(t, w.extra...), args...)
	return w.env(func(t *testing.T, session string) *mcp.Client {
		t.Helper()
		c, err := mcp.Connect(context.Background(), mcp.HTTPTransport(url, token), session)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	})
}

// withGitea gives the workspace's steward mcp a repository on the real Gitea, logged in as
// the worker (through the environment, as a real deployment does).
func (w mcpWorkspace) withGitea(t *testing.T, env func(mcpWorkspace) mcptest.Env) mcptest.GiteaEnv {
	b, cl := mcptest.RealRepo(t)
	w.extra = []string{"STEWARD_GITEA_URL=" + b.URL, "STEWARD_GITEA_TOKEN=" + b.WorkerToken, "STEWARD_GITEA_REPO=" + b.Owner + "/" + b.Repo}
	return mcptest.WithGitea(env(w), b, cl, w.ws)
}

func TestMCPStdioFlow(t *testing.T)     { mcptest.Flow(t, newMCPWorkspace(t).stdio(t), 7) }
func TestMCPStdioSeedFlow(t *testing.T) { mcptest.SeedFlow(t, newMCPWorkspace(t).stdio(t), 5) }
func TestMCPHTTPSeedFlow(t *testing.T)  { mcptest.SeedFlow(t, newMCPWorkspace(t).http(t, ""), 5) }

// TestMCPStdioClarify and TestMCPHTTPClarify: ask, get_answer and claim next through a real
// steward mcp on a real Gitea.
func TestMCPStdioClarify(t *testing.T) {
	mcptest.Clarify(t, newMCPWorkspace(t).withGitea(t, func(w mcpWorkspace) mcptest.Env { return w.stdio(t) }))
}

func TestMCPHTTPClarify(t *testing.T) {
	mcptest.Clarify(t, newMCPWorkspace(t).withGitea(t, func(w mcpWorkspace) mcptest.Env { return w.http(t, "") }))
}
func TestMCPStdioRefusals(t *testing.T) { mcptest.Refusals(t, newMCPWorkspace(t).stdio(t), 3) }

// TestMCPStdioSixteenWorkers: sixteen steward mcp processes, one per worker, claim the
// same item at once: one lease, fifteen structured refusals, one terminal record each.
func TestMCPStdioSixteenWorkers(t *testing.T) { mcptest.Race(t, newMCPWorkspace(t).stdio(t), 16, 11) }

func TestMCPHTTPFlow(t *testing.T)     { mcptest.Flow(t, newMCPWorkspace(t).http(t, ""), 7) }
func TestMCPHTTPRefusals(t *testing.T) { mcptest.Refusals(t, newMCPWorkspace(t).http(t, ""), 3) }

// TestMCPHTTPSixteenClients: sixteen connections to one steward mcp over HTTP.
func TestMCPHTTPSixteenClients(t *testing.T) {
	mcptest.Race(t, newMCPWorkspace(t).http(t, "tok-0123456789abcdef0123"), 16, 11)
}

// TestMCPHTTPToken: with a token file every request needs the bearer token; a wrong or
// missing one is 401 before any MCP is spoken, the right one serves.
func TestMCPHTTPToken(t *testing.T) {
	w := newMCPWorkspace(t)
	f := filepath.Join(t.TempDir(), "token")
	const token = "tok-0123456789abcdef0123"
	if err := os.WriteFile(f, []byte(token), 0o600); err != nil {
		t.Fatal(err)
	}
	url, _ := serveHTTP(t, realSteward(t), cleanEnv(t), append(w.flags, "--token-file", f)...)
	for _, h := range []string{"", "Bearer nope-nope-nope-nope", "token " + token} {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if h != "" {
			req.Header.Set("Authorization", h)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
			t.Fatalf("Authorization %q: status %d", h, resp.StatusCode)
		}
	}
	if _, err := mcp.Connect(context.Background(), mcp.HTTPTransport(url, "wrong-token-0123456789"), "w1"); err == nil {
		t.Fatal("a client with the wrong token connected")
	}
	c, err := mcp.Connect(context.Background(), mcp.HTTPTransport(url, token), "w1")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if m, err := c.MyLeases(context.Background()); err != nil || !m.Success {
		t.Fatalf("my_leases with the token: %+v %v", m, err)
	}
}

// TestMCPHTTPRefusesToStart: beyond loopback without a token file, with a token file others
// can read, or with a token on the command line, steward mcp refuses to start (exit 1) and
// binds nothing.
func TestMCPHTTPRefusesToStart(t *testing.T) {
	w := newMCPWorkspace(t)
	loose := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(loose, []byte("tok-0123456789abcdef0123"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--http", "0.0.0.0:0"}, "bearer token"},
		{[]string{"--http", ":0"}, "bearer token"},
		{[]string{"--http", "[::]:0"}, "bearer token"},
		{[]string{"--http", "example.com:0"}, "bearer token"},
		{[]string{"--http", "0.0.0.0:0", "--token-file", loose}, "chmod 600"},
		{[]string{"--http", "127.0.0.1:0", "--token-file", filepath.Join(t.TempDir(), "none")}, "no such file"},
		{[]string{"--http", "127.0.0.1"}, "host:port"},
		{[]string{"--token-file", loose}, "goes with --http"},
		{[]string{"--http", "0.0.0.0:0", "--token", "tok-0123456789abcdef0123"}, "unknown flag"},
	} {
		before, _ := os.ReadDir(filepath.Dir(w.audit))
		code, out := run(t, append(append([]string{"mcp"}, tc.args...), w.flags...)...)
		if code != ExitError || !strings.Contains(out, tc.want) {
			t.Errorf("steward mcp %v: exit %d\n%s\nwant exit 1 saying %q", tc.args, code, out, tc.want)
		}
		if strings.Contains(out, "tok-0123456789abcdef0123") {
			t.Errorf("steward mcp %v printed the token", tc.args)
		}
		if after, _ := os.ReadDir(filepath.Dir(w.audit)); len(after) != len(before) {
			t.Errorf("steward mcp %v opened the audit log before refusing", tc.args)
		}
	}
}

// crashClient starts a worker process (the test binary as mcp-client) that runs its own
// steward mcp (the test binary as steward, with a crash hook at step) over stdio and claims
// item n. It returns once the server has stopped at the step, with the client, the
// server's pid and the client's stderr (which the server shares: it reaches EOF when both
// have exited).
func crashClient(t *testing.T, w mcpWorkspace, step, goFIFO string, n int64) (*exec.Cmd, int, io.Reader) {
	t.Helper()
	mark := filepath.Join(t.TempDir(), "mark")
	if err := syscall.Mkfifo(mark, 0o600); err != nil {
		t.Fatal(err)
	}
	argv, _ := json.Marshal(append([]string{os.Args[0], "mcp"}, w.flags...))
	item, _ := json.Marshal(mcp.ItemRef{Org: "acme", Repo: "widgets", Number: n})
	cmd := exec.Command(os.Args[0])
	cmd.Env = cleanEnv(t, "STEWARD_TEST_AS=mcp-client", "STEWARD_TEST_SERVER_ARGS="+string(argv), "STEWARD_TEST_ITEM="+string(item),
		"STEWARD_TEST_SESSION=crash-w1", "STEWARD_TEST_CRASH_STEP="+step, "STEWARD_TEST_CRASH_MARK="+mark, "STEWARD_TEST_CRASH_GO="+goFIFO)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); _, _ = cmd.Process.Wait() })
	f, err := os.Open(mark) // blocks until the server reaches the step
	if err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(f).ReadString('\n')
	f.Close()
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("the server did not report reaching %s: %q", step, line)
	}
	return cmd, pid, stderr
}

// TestMCPClientKilledMidClaim: a worker killed (with its stdio steward mcp) while the claim
// is between its intent and its outcome leaves the attempt unknown; `steward audit verify`
// settles it from evidence: failed when nothing was written, succeeded when the lease and
// the lock both are.
func TestMCPClientKilledMidClaim(t *testing.T) {
	for _, tc := range []struct {
		step string
		want govern.Result
	}{
		{"intent-written", govern.ResultFailed},
		{"lock-" + locks.StepRenamed, govern.ResultSucceeded},
	} {
		t.Run(tc.step, func(t *testing.T) {
			w := newMCPWorkspace(t)
			cmd, _, stderr := crashClient(t, w, tc.step, "", 21)
			if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			_, _ = cmd.Process.Wait()
			_, _ = io.Copy(io.Discard, stderr) // EOF: the server is gone too
			atts := mcptest.Env{AuditPath: w.audit}.Attempts(t)
			if len(atts) != 1 || atts[0].Outcome != nil || atts[0].Status() != govern.ResultUnknown {
				t.Fatalf("after the kill the attempt should be unknown with no outcome: %+v", atts)
			}
			code, out := run(t, append([]string{"audit", "verify"}, w.flags...)...)
			if code != ExitOK || !strings.Contains(out, atts[0].ID) {
				t.Fatalf("audit verify: %d\n%s", code, out)
			}
			a := mcptest.Env{AuditPath: w.audit}.Attempts(t)[0]
			if a.Outcomes != 1 || a.Status() != tc.want {
				t.Fatalf("after verify: %d outcomes, status %s, want %s\n%s", a.Outcomes, a.Status(), tc.want, out)
			}
		})
	}
}

// TestMCPClientKilledServerFinishes: a worker killed alone mid-claim (its steward mcp lives
// on, its stdin closed) does not cut the apply short: the server finishes the claim,
// records its one outcome and exits; nothing is left for the verifier, and the lease names
// the dead worker's pid, so a supervisor sees a dead owner.
func TestMCPClientKilledServerFinishes(t *testing.T) {
	w := newMCPWorkspace(t)
	goFIFO := filepath.Join(t.TempDir(), "go")
	if err := syscall.Mkfifo(goFIFO, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd, _, stderr := crashClient(t, w, "lease-committed", goFIFO, 22)
	clientPID := cmd.Process.Pid
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_, _ = cmd.Process.Wait()
	g, err := os.OpenFile(goFIFO, os.O_WRONLY, 0) // lets the server's apply go on
	if err != nil {
		t.Fatal(err)
	}
	g.Close()
	_, _ = io.Copy(io.Discard, stderr) // EOF: the server has exited
	atts := mcptest.Env{AuditPath: w.audit}.OneTerminal(t)
	if len(atts) != 1 || atts[0].Status() != govern.ResultSucceeded {
		t.Fatalf("the server did not finish the claim: %+v", atts)
	}
	if code, out := run(t, append([]string{"audit", "verify"}, w.flags...)...); code != ExitOK || !strings.Contains(out, "no unknown outcomes") {
		t.Fatalf("audit verify: %d\n%s", code, out)
	}
	r, err := leases.OpenReadOnly(w.ws.DBPath)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ls, err := r.LeasesForWorkItem(context.Background(), leaserec.WorkRef{Remote: "origin", Org: "acme", Repo: "widgets", Kind: leaserec.KindIssue, Number: 22})
	if err != nil || len(ls) != 1 || ls[0].OwnerPID != int64(clientPID) || leases.Liveness(clientPID, ls[0].OwnerHost) != leaserec.ProcessDead {
		t.Fatalf("lease %+v %v: want one naming the dead worker %d", ls, err, clientPID)
	}
}
