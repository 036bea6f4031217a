package giteatest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Server is a running Gitea. Its tokens are plain strings: this package exists for tests only.
type Server struct {
	URL           string // http://127.0.0.1:<port>
	Admin         string // admin login (the "maintainer")
	AdminPassword string
	AdminToken    string // scopes write:repository, write:issue, write:user
	Worker        string // second, non-admin login (the "worker"), collaborator on every NewRepo
	WorkerToken   string
	dir           string
	cmd           *exec.Cmd
	logs          *syncWriter
}

var (
	sharedOnce sync.Once
	shared     *Server
	sharedErr  error
)

// Main runs the tests and stops the shared server afterwards: func TestMain(m *testing.M) {
// os.Exit(giteatest.Main(m)) }.
func Main(m *testing.M) int {
	code := m.Run()
	if shared != nil {
		shared.Close()
	}
	return code
}

// Shared returns the test binary's one server, starting it on first use. It fails the test if
// the server cannot be built or started (skips only with STEWARD_SKIP_REAL_GITEA=1 outside CI).
func Shared(t testing.TB) *Server {
	t.Helper()
	maybeSkip(t)
	sharedOnce.Do(func() { shared, sharedErr = start(t.Logf) })
	if sharedErr != nil {
		t.Fatalf("giteatest: %v", sharedErr)
	}
	return shared
}

func maybeSkip(t testing.TB) {
	if os.Getenv("STEWARD_SKIP_REAL_GITEA") == "1" && os.Getenv("CI") == "" {
		t.Skip("STEWARD_SKIP_REAL_GITEA=1 and CI unset: skipping real-Gitea test")
	}
}

// binary builds (or finds in the cache) the Gitea binary and returns its path and the source
// directory holding options/ and templates/.
func binary() (bin, src string, err error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
	var out, errb bytes.Buffer
	cmd := exec.Command("bash", filepath.Join(dir, ".ci", "build-gitea"))
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", "", fmt.Errorf("build-gitea: %v: %s", err, tail(errb.String(), 2000))
	}
	bin = strings.TrimSpace(out.String())
	src = filepath.Join(filepath.Dir(bin), "src-"+strings.TrimPrefix(filepath.Base(bin), "gitea-"))
	if _, err := os.Stat(filepath.Join(src, "options")); err != nil {
		return "", "", fmt.Errorf("build-gitea: no options/ next to %s: %v", bin, err)
	}
	return bin, src, nil
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// freePort returns a currently free loopback TCP port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func start(logf func(string, ...any)) (s *Server, err error) {
	t0 := time.Now()
	bin, src, err := binary()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "steward-gitea-*")
	if err != nil {
		return nil, err
	}
	s = &Server{dir: dir, Admin: "steward-admin", Worker: "worker-one", logs: &syncWriter{}}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	for _, sub := range []string{"options", "templates"} {
		if err := exec.Command("cp", "-r", filepath.Join(src, sub), filepath.Join(dir, sub)).Run(); err != nil {
			return nil, fmt.Errorf("copy %s: %v", sub, err)
		}
	}
	_ = exec.Command("chmod", "-R", "u+w", dir).Run()
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	s.URL = fmt.Sprintf("http://127.0.0.1:%d", port)
	ini := fmt.Sprintf(`RUN_MODE = prod
WORK_PATH = %[1]s
[database]
DB_TYPE = sqlite3
PATH = %[1]s/data/gitea.db
[server]
HTTP_ADDR = 127.0.0.1
HTTP_PORT = %[2]d
ROOT_URL = http://127.0.0.1:%[2]d/
DISABLE_SSH = true
OFFLINE_MODE = true
APP_DATA_PATH = %[1]s/data
[security]
INSTALL_LOCK = true
SECRET_KEY = %[3]s
INTERNAL_TOKEN = %[4]s
[service]
DISABLE_REGISTRATION = true
[log]
LEVEL = Warn
ROOT_PATH = %[1]s/log
[repository]
ROOT = %[1]s/repos
[indexer]
ISSUE_INDEXER_TYPE = db
[cron]
ENABLED = false
`, dir, port, randHex(16), randHex(32))
	cfg := filepath.Join(dir, "app.ini")
	if err := os.WriteFile(cfg, []byte(ini), 0o600); err != nil {
		return nil, err
	}
	env := append(
		withoutSecrets(os.Environ()),
		"GITEA_I_AM_BEING_UNSAFE_RUNNING_AS_ROOT=true",
		"GITEA_WORK_DIR="+dir,
		"HOME="+dir,
	)
	run := func(args ...string) (string, error) {
		cmd := exec.Command(bin, append([]string{"--config", cfg}, args...)...)
		cmd.Env, cmd.Dir = env, dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("gitea %s: %v: %s", args[0], err, tail(string(out), 2000))
		}
		return string(out), nil
	}
	if _, err := run("migrate"); err != nil {
		return nil, err
	}
	// No secret on a child's command line (/proc/<pid>/cmdline is readable by every user):
	// Gitea generates the admin's password and prints it, and it is read from the output.
	out, err := run("admin", "user", "create", "--username", s.Admin, "--random-password",
		"--email", s.Admin+"@example.invalid", "--admin", "--must-change-password=false")
	if err != nil {
		return nil, err
	}
	const said = "generated random password is '"
	if i := strings.Index(out, said); i >= 0 {
		line, _, _ := strings.Cut(out[i+len(said):], "\n") // the password may hold a quote itself
		s.AdminPassword = strings.TrimSuffix(strings.TrimRight(line, "\r "), "'")
	}
	if s.AdminPassword == "" {
		return nil, errors.New("giteatest: gitea admin user create printed no generated password")
	}
	tReady := time.Now()
	s.cmd = exec.Command(bin, "--config", cfg, "web")
	s.cmd.Env, s.cmd.Dir = env, dir
	s.cmd.Stdout, s.cmd.Stderr = s.logs, s.logs
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	exited := make(chan error, 1)
	go func() { exited <- s.cmd.Wait() }()
	if err := waitReady(s.URL, exited, 60*time.Second); err != nil {
		return nil, fmt.Errorf("%v; server log: %s", err, tail(s.logs.String(), 2000))
	}
	if s.AdminToken, err = s.createToken(s.Admin, s.AdminPassword); err != nil {
		return nil, err
	}
	// The worker is made through the admin API: one CLI run fewer (each costs seconds).
	workerPW := "pw-" + randHex(12)
	if err := s.api("POST", "/admin/users", "", [2]string{s.Admin, s.AdminPassword}, map[string]any{"username": s.Worker,
		"password": workerPW, "email": s.Worker + "@example.invalid", "must_change_password": false}, nil); err != nil {
		return nil, err
	}
	if s.WorkerToken, err = s.createToken(s.Worker, workerPW); err != nil {
		return nil, err
	}
	logf(
		"giteatest: Gitea ready at %s in %s (build check, migrate and admin user %s; web start and API setup %s)",
		s.URL,
		time.Since(t0).Round(time.Millisecond),
		tReady.Sub(t0).Round(time.Millisecond),
		time.Since(tReady).Round(time.Millisecond),
	)
	return s, nil
}

// syncWriter is a buffer safe for the server's output goroutines and readers.
type syncWriter struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

func (w *syncWriter) String() string { w.mu.Lock(); defer w.mu.Unlock(); return w.buf.String() }

// waitReady polls /api/v1/version until it answers 200, the process exits, or the deadline.
func waitReady(base string, exited <-chan error, within time.Duration) error {
	deadline := time.Now().Add(within)
	hc := &http.Client{Timeout: 2 * time.Second}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		resp, err := hc.Get(base + "/api/v1/version")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case e := <-exited:
			return fmt.Errorf("gitea web exited before becoming ready: %v", e)
		case <-tick.C:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("gitea not ready after %s", within)
		}
	}
}

// api sends one JSON request with basic auth (user, pw) or a token (pw == "" and user is the
// token) and decodes the answer into out.
func (s *Server) api(method, path, token string, basic [2]string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, _ := json.Marshal(in)
		body = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, s.URL+"/api/v1"+path, body)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "token "+token)
	} else {
		req.SetBasicAuth(basic[0], basic[1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: HTTP %d: %s", method, path, resp.StatusCode, tail(string(data), 500))
	}
	if out != nil {
		return json.Unmarshal(data, out)
	}
	return nil
}

func (s *Server) createToken(user, pw string) (string, error) {
	var tok struct {
		Sha1 string `json:"sha1"`
	}
	err := s.api(
		"POST",
		"/users/"+user+"/tokens",
		"",
		[2]string{user, pw},
		map[string]any{
			"name":   "steward-test-" + randHex(4),
			"scopes": []string{"write:repository", "write:issue", "write:user"},
		},
		&tok,
	)
	return tok.Sha1, err
}

// NewRepo creates a repository owned by Admin with auto_init (branch main), adds Worker as a
// write collaborator, and returns its name. name gets a random suffix so tests never collide.
func (s *Server) NewRepo(t testing.TB, name string) string {
	t.Helper()
	name = name + "-" + randHex(3)
	if err := s.api("POST", "/user/repos", s.AdminToken, [2]string{}, map[string]any{"name": name, "auto_init": true,
		"default_branch": "main", "readme": "Default"}, nil); err != nil {
		t.Fatalf("giteatest: create repo: %v", err)
	}
	if err := s.api("PUT", fmt.Sprintf("/repos/%s/%s/collaborators/%s", s.Admin, name, s.Worker), s.AdminToken,
		[2]string{}, map[string]any{"permission": "write"}, nil); err != nil {
		t.Fatalf("giteatest: add collaborator: %v", err)
	}
	return name
}

// Close kills the server's process group and removes its temporary directory.
func (s *Server) Close() {
	if s.cmd != nil && s.cmd.Process != nil {
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	}
	if s.dir != "" {
		_ = os.RemoveAll(s.dir)
	}
}

// withoutSecrets drops variables that may hold a credential (STEWARD_GITEA_TOKEN, …): the
// test server needs none of the caller's.
func withoutSecrets(env []string) []string {
	out := env[:0:0]
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		up := strings.ToUpper(name)
		if strings.Contains(up, "TOKEN") || strings.Contains(up, "PASSWORD") || strings.Contains(up, "SECRET") {
			continue
		}
		out = append(out, kv)
	}
	return out
}
