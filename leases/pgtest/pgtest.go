// Package pgtest runs a real PostgreSQL server for a test binary: started on first use
// from the Debian postgresql package's initdb and postgres (as the postgres system user
// when the tests run as root: the server refuses to run as root), in a temporary data
// directory, listening on loopback only on a free port, with a fresh database per test.
// TestMain calls Main, which stops the server and removes its directory when the tests
// end, whether they passed or not; the server is also the test binary's child with a
// parent-death signal, so a test binary killed outright takes it down too.
//
// Without the server binaries every test that asks for a database fails and says how
// to install them (apt-get install -y postgresql), unless STEWARD_SKIP_POSTGRES=1 is set
// (never in CI). fsync is off: the tests kill steward, never the server.
//
// It is for tests only.
package pgtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// User is the superuser initdb creates; databases are reached as it, without a password
// (trust authentication, loopback and the server's own socket only).
const User = "steward"

// Server is a running PostgreSQL server.
type Server struct {
	Dir  string // the temporary directory: data/, the socket, the log
	Port int
	cmd  *exec.Cmd
	done chan error
	stop chan struct{}
}

var (
	once    sync.Once
	srv     *Server
	errStrt error
	seq     atomic.Int64
	mu      sync.Mutex
)

// Main runs m and stops the server (if a test started one), then exits with m's code.
func Main(m *testing.M) {
	code := m.Run()
	Stop()
	os.Exit(code)
}

// Stop stops the server started for this binary and removes its directory.
func Stop() {
	mu.Lock()
	defer mu.Unlock()
	if srv != nil {
		srv.stopNow()
		srv = nil
	}
}

// Shared returns the binary's server, starting it on first use; it fails (or, with
// STEWARD_SKIP_POSTGRES=1, skips) t when none can be started.
func Shared(t testing.TB) *Server {
	t.Helper()
	once.Do(func() {
		s, err := start()
		mu.Lock()
		srv, errStrt = s, err
		mu.Unlock()
	})
	mu.Lock()
	s, err := srv, errStrt
	mu.Unlock()
	if err != nil {
		if os.Getenv("STEWARD_SKIP_POSTGRES") == "1" {
			t.Skipf("pgtest: %v (STEWARD_SKIP_POSTGRES=1)", err)
		}
		t.Fatalf("pgtest: %v", err)
	}
	if s == nil {
		t.Fatal("pgtest: the server was stopped")
	}
	return s
}

// NewDB creates a fresh database on the shared server for t, dropped when t ends, and
// returns its URL (no password: trust authentication on loopback).
func NewDB(t testing.TB) string {
	t.Helper()
	return newDB(t, Shared(t), "template0")
}

// NewDBFrom is NewDB copying a template made once per test binary by init (given the
// template's URL): a schema every test needs is built once, not per test.
func NewDBFrom(t testing.TB, template string, init func(url string) error) string {
	t.Helper()
	s := Shared(t)
	tmplMu.Lock()
	err, done := tmplErr[template]
	if !done {
		name := "tmpl_" + template
		err = s.Admin(context.Background(), "CREATE DATABASE "+name+" TEMPLATE template0")
		if err == nil {
			err = init(s.URL(name))
		}
		tmplErr[template] = err
	}
	tmplMu.Unlock()
	if err != nil {
		t.Fatalf("pgtest: template %s: %v", template, err)
	}
	return newDB(t, s, "tmpl_"+template)
}

var (
	tmplMu  sync.Mutex
	tmplErr = map[string]error{}
)

func newDB(t testing.TB, s *Server, template string) string {
	t.Helper()
	name := "t_" + strconv.FormatInt(seq.Add(1), 10) + "_" + strconv.Itoa(os.Getpid())
	// FILE_COPY: a small database copies faster as files than through the WAL.
	create := "CREATE DATABASE " + name + " TEMPLATE " + template + " STRATEGY FILE_COPY"
	if err := s.Admin(context.Background(), create); err != nil {
		t.Fatalf("pgtest: create database: %v", err)
	}
	t.Cleanup(func() {
		_ = s.Admin(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	})
	return s.URL(name)
}

// URL is the connection URL of database db on s.
func (s *Server) URL(db string) string {
	return fmt.Sprintf("postgres://%s@127.0.0.1:%d/%s?sslmode=disable", User, s.Port, db)
}

// Admin runs one statement on the server's postgres database.
func (s *Server) Admin(ctx context.Context, sql string, args ...any) error {
	c, err := pgx.Connect(ctx, s.URL("postgres"))
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	_, err = c.Exec(ctx, sql, args...)
	return err
}

// Exec runs one statement on the database url names (fixtures: ageing rows, holding a
// lock), failing t on error.
func Exec(t testing.TB, url, sql string, args ...any) {
	t.Helper()
	ctx := context.Background()
	c, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatalf("pgtest: connect: %v", err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, sql, args...); err != nil {
		t.Fatalf("pgtest: %s: %v", sql, err)
	}
}

// binDir finds the server binaries: $STEWARD_PG_BIN, else the newest
// /usr/lib/postgresql/*/bin, else the directory of initdb on $PATH.
func binDir() (string, error) {
	if d := os.Getenv("STEWARD_PG_BIN"); d != "" {
		return d, nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) < version(dirs[j]) })
	for i := len(dirs) - 1; i >= 0; i-- {
		if _, err := os.Stat(filepath.Join(dirs[i], "initdb")); err == nil {
			return dirs[i], nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", errors.New("PostgreSQL server binaries (initdb, postgres) not found: install them with " +
		"apt-get install -y postgresql, or set STEWARD_PG_BIN to their directory")
}

func version(dir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	return n
}

// start initialises a data directory and starts a server on a free loopback port.
func start() (*Server, error) {
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "steward-pg-")
	if err != nil {
		return nil, err
	}
	cred, err := credential(dir)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", filepath.Join(dir, "data"), "-A", "trust", "-U", User,
		"-E", "UTF8", "--no-sync", "--no-instructions")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	var out bytes.Buffer
	initdb.Stdout, initdb.Stderr = &out, &out
	if err := initdb.Run(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("initdb: %v: %s", err, strings.TrimSpace(out.String()))
	}
	var last error
	for range 5 {
		s, err := launch(bin, dir, cred)
		if err == nil {
			return s, nil
		}
		last = err
	}
	os.RemoveAll(dir)
	return nil, last
}

// credential is the postgres system user's when running as root (the directory is
// handed to it), else nil (run as ourselves).
func credential(dir string) (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("running as root needs the postgres system user (the postgresql package creates it): %v", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := os.Chown(dir, uid, gid); err != nil {
		return nil, err
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// launch starts postgres on a free port and waits until it accepts a connection.
func launch(bin, dir string, cred *syscall.Credential) (*Server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	logf, err := os.OpenFile(filepath.Join(dir, "log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	s := &Server{Dir: dir, Port: port, done: make(chan error, 1), stop: make(chan struct{})}
	started := make(chan error, 1)
	// On Linux the server dies with this thread (Pdeathsig, serverAttr), so the thread that
	// starts it stays alive, locked, until the server is stopped.
	go func() {
		runtime.LockOSThread()
		cmd := exec.Command(filepath.Join(bin, "postgres"), "-D", filepath.Join(dir, "data"), "-p", strconv.Itoa(port),
			"-k", dir, "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "synchronous_commit=off",
			"-c", "full_page_writes=off", "-c", "max_connections=300", "-c", "shared_buffers=32MB",
			"-c", "log_min_messages=warning", "-c", "logging_collector=off")
		cmd.Stdout, cmd.Stderr = logf, logf
		cmd.SysProcAttr = serverAttr(cred)
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		s.cmd = cmd
		started <- nil
		go func() { s.done <- cmd.Wait(); logf.Close() }()
		<-s.stop
	}()
	if err := <-started; err != nil {
		logf.Close()
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	tick := time.NewTicker(25 * time.Millisecond)
	defer tick.Stop()
	for {
		c, err := pgx.Connect(ctx, s.URL("postgres"))
		if err == nil {
			c.Close(ctx)
			return s, nil
		}
		select {
		case werr := <-s.done:
			close(s.stop)
			b, _ := os.ReadFile(filepath.Join(dir, "log"))
			return nil, fmt.Errorf("postgres exited (%v): %s", werr, lastLines(string(b), 5))
		case <-ctx.Done():
			s.stopNow()
			return nil, fmt.Errorf("postgres did not accept connections within 60s: %v", err)
		case <-tick.C:
		}
	}
}

// stopNow stops the server (immediate shutdown: nothing of it needs keeping) and
// removes its directory.
func (s *Server) stopNow() {
	if s.cmd != nil && s.cmd.Process != nil {
		_ = s.cmd.Process.Signal(syscall.SIGQUIT)
		select {
		case <-s.done:
		case <-time.After(30 * time.Second):
			_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
			<-s.done
		}
	}
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
	os.RemoveAll(s.Dir)
}

func lastLines(s string, n int) string {
	ls := strings.Split(strings.TrimSpace(s), "\n")
	if len(ls) > n {
		ls = ls[len(ls)-n:]
	}
	return strings.Join(ls, "\n")
}
