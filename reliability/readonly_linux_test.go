package reliability_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"steward/govern"
	"steward/leases"
	"steward/leases/leaserec"
	"steward/mcp"
)

// The read guarantee on the command line: steward status (text, JSON, --at, --watch),
// steward watch and steward history read the control-plane DB without creating or
// changing a file beside it, whatever its journal mode and whoever else has it open; and a
// read made as another OS account than the workers' never leaves them a file they cannot
// write (docs/reliability.md, "Reads write nothing").

var (
	sharedBinOnce sync.Once
	sharedBin     string
	sharedBinErr  error
)

// sharedSteward builds the steward binary once per test binary into a directory every
// account may read and run from.
func sharedSteward(t *testing.T) string {
	t.Helper()
	sharedBinOnce.Do(func() {
		_, file, _, _ := runtime.Caller(0)
		dir, err := os.MkdirTemp("", "steward-shared-bin-")
		if err != nil {
			sharedBinErr = err
			return
		}
		if err := os.Chmod(dir, 0o755); err != nil {
			sharedBinErr = err
			return
		}
		sharedBin = filepath.Join(dir, "steward")
		out, err := exec.Command("go", "build", "-C", filepath.Dir(filepath.Dir(file)), "-o", sharedBin, ".").CombinedOutput()
		if err != nil {
			sharedBinErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if sharedBinErr != nil {
		t.Fatal(sharedBinErr)
	}
	return sharedBin
}

// treeState is every file under root but steward's own audit/ directory (its audit log,
// and the attention state steward watch keeps beside it): its path, type and mode, owner,
// size, modification time and the hash of its bytes (see leases' dirState; not the ctime,
// which SQLite running as root moves with a chown to the same owner).
func treeState(t *testing.T, root string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "audit" {
			return filepath.SkipDir // steward's own: its audit log and watch's attention state
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		st := fi.Sys().(*syscall.Stat_t)
		h := "-"
		if fi.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h = fmt.Sprintf("%x", sha256.Sum256(b))[:16]
		}
		mtime := fi.ModTime().UnixNano()
		if fi.IsDir() {
			mtime = 0 // a directory's own times move with its entries, compared one by one
		}
		rel, _ := filepath.Rel(root, p)
		m[rel] = fmt.Sprintf("%v uid=%d gid=%d size=%d mtime=%d sha=%s", fi.Mode(), st.Uid, st.Gid, fi.Size(), mtime, h)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func treeDiff(before, after map[string]string) string {
	var d []string
	for k, v := range after {
		switch b, ok := before[k]; {
		case !ok:
			d = append(d, "created "+k+" ("+v+")")
		case b != v:
			d = append(d, "changed "+k+": "+b+" -> "+v)
		}
	}
	for k := range before {
		if _, ok := after[k]; !ok {
			d = append(d, "removed "+k)
		}
	}
	slices.Sort(d)
	return strings.Join(d, "\n")
}

// account is an OS account the test runs steward as.
type account struct {
	name     string
	uid, gid uint32
}

// osAccount returns the system account name, creating it (no home, no login shell) when
// it does not exist. Creating accounts needs root, which CI has.
func osAccount(t *testing.T, name string) account {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("creating the test's OS accounts needs root (CI runs as root)")
	}
	u, err := user.Lookup(name)
	if err != nil {
		out, aerr := exec.Command("useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name).CombinedOutput()
		if u, err = user.Lookup(name); err != nil { // another test binary may have made it meanwhile
			t.Fatalf("useradd %s: %v %s; lookup: %v", name, aerr, out, err)
		}
	}
	uid, _ := strconv.ParseUint(u.Uid, 10, 32)
	gid, _ := strconv.ParseUint(u.Gid, 10, 32)
	return account{name: name, uid: uint32(uid), gid: uint32(gid)}
}

// sharedWorkspace is a steward workspace under a directory every account may traverse.
type sharedWorkspace struct {
	root  string // removed at the end
	dir   string // the workspace
	ws    govern.Workspace
	audit string
}

func newSharedWorkspace(t *testing.T) *sharedWorkspace {
	t.Helper()
	root, err := os.MkdirTemp("", "steward-readonly-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	must(t, os.Chmod(root, 0o755))
	dir := filepath.Join(root, "ws")
	w := &sharedWorkspace{root: root, dir: dir, audit: filepath.Join(dir, "audit", "audit.jsonl"), ws: govern.Workspace{
		LocksDir: filepath.Join(dir, "locks"), DBPath: filepath.Join(dir, "db", "control_plane.sqlite3"),
		RepoRoot: filepath.Join(dir, "repo")}}
	must(t, govern.InitWorkspace(w.ws))
	must(t, os.MkdirAll(filepath.Dir(w.audit), 0o700))
	// An empty config file every account reads: the commands run on their flags alone (a
	// file --config names must exist).
	must(t, os.WriteFile(filepath.Join(root, "no-config.yaml"), nil, 0o644))
	return w
}

func (w *sharedWorkspace) flags() []string {
	return []string{"--locks", w.ws.LocksDir, "--db", w.ws.DBPath, "--repo-root", w.ws.RepoRoot, "--audit", w.audit,
		"--config", filepath.Join(w.root, "no-config.yaml")}
}

// run runs the steward binary as acct (nil: this process's account) with a private home
// and state, and returns its exit code and output.
func (w *sharedWorkspace) run(t *testing.T, acct *account, args ...string) (int, string) {
	t.Helper()
	cmd := w.command(t, acct, args...)
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("steward %v: %v", args, err)
	}
	return code, string(out)
}

func (w *sharedWorkspace) command(t *testing.T, acct *account, args ...string) *exec.Cmd {
	t.Helper()
	home, err := os.MkdirTemp(w.root, "home-")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(sharedSteward(t), append(args, w.flags()...)...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "XDG_CONFIG_HOME=" + home, "XDG_STATE_HOME=" + home,
		"XDG_CACHE_HOME=" + home, "STEWARD_HOSTNAME=test-host"}
	if acct != nil {
		must(t, os.Chown(home, int(acct.uid), int(acct.gid)))
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: acct.uid, Gid: acct.gid}}
	}
	return cmd
}

// claim has the worker claim issue n of acme/widgets through the binary and fails the test
// unless the claim succeeded.
func (w *sharedWorkspace) claim(t *testing.T, acct *account, n int) {
	t.Helper()
	code, out := w.run(t, acct, "claim", "--org", "acme", "--repo", "widgets", "--number", strconv.Itoa(n),
		"--session", "w-"+strconv.Itoa(n), "--as-role", "operator", "--json")
	var o govern.Outcome
	if code != 0 || json.Unmarshal([]byte(out), &o) != nil || o.Result != govern.ResultSucceeded {
		t.Fatalf("the worker's claim of #%d: exit %d\n%s", n, code, out)
	}
}

// closeCleanly opens the DB and closes it as its last connection, which checkpoints a WAL
// DB and removes its -wal and -shm: the state the supervised system's own tools leave it
// in (each opens, writes and closes), whatever the commands before left.
func closeCleanly(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path)
	must(t, err)
	var n int
	must(t, db.QueryRow("SELECT count(*) FROM sqlite_master").Scan(&n))
	must(t, db.Close())
	for _, suffix := range []string{"-wal", "-shm"} {
		if _, err := os.Lstat(path + suffix); err == nil {
			t.Fatalf("set-up: %s left after the last connection closed", suffix)
		}
	}
}

// readCommands are the one-shot reads of the DB on the command line.
var readCommands = [][]string{
	{"status", "--no-gitea"},
	{"status", "--json", "--no-gitea"},
	{"status", "--at", "1m"},
	{"history", "--since", "2h"},
	{"history", "--item", "acme/widgets#1"},
}

// watchBriefly runs a watching command until it has printed a first line (its first
// read of the DB made), then stops it with sig, as a person does.
func (w *sharedWorkspace) watchBriefly(t *testing.T, acct *account, sig os.Signal, args ...string) {
	t.Helper()
	cmd := w.command(t, acct, args...)
	out, err := cmd.StdoutPipe()
	must(t, err)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	must(t, cmd.Start())
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	if !sc.Scan() {
		cmd.Wait()
		t.Fatalf("steward %v printed nothing: %s", args, stderr.String())
	}
	must(t, cmd.Process.Signal(sig))
	for sc.Scan() {
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("steward %v on %v: %v %s", args, sig, err, stderr.String())
	}
}

// TestReadCommandsCreateNothing: every read command leaves the DB's directory, the lock
// directory and the repository root exactly as they were, on a WAL DB closed cleanly, on a
// WAL DB a writer process holds open (this test's own), and on a rollback-journal DB.
// Before the fix status and history created the -wal and -shm of a WAL DB closed cleanly
// and wrote their read marks into a live writer's -shm.
func TestReadCommandsCreateNothing(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, w *sharedWorkspace) (done func())
	}{
		{"WAL closed cleanly", func(t *testing.T, w *sharedWorkspace) func() {
			w.claim(t, nil, 1)
			closeCleanly(t, w.ws.DBPath)
			return nil
		}},
		{"WAL with a live writer", func(t *testing.T, w *sharedWorkspace) func() {
			w.claim(t, nil, 1)
			s, err := leases.OpenReadWrite(w.ws.DBPath, leases.StoreOptions{})
			must(t, err)
			at := time.Now()
			out, err := s.Claim(context.Background(), leases.ClaimRequest{
				Session:   leases.SessionInfo{SessionID: "live-writer", Role: "author", PID: int64(os.Getpid()), Host: "test-host"},
				Work:      leaserec.WorkRef{Remote: "origin", Org: "acme", Repo: "widgets", Kind: leaserec.KindIssue, Number: 2},
				TaskClass: "author_issue_work", WorktreePath: filepath.Join(w.ws.RepoRoot, "branches", "b2")}, at)
			if err != nil || !out.OK() {
				t.Fatalf("the live writer's claim: %+v %v", out, err)
			}
			return func() { must(t, s.Close()) }
		}},
		{"rollback journal", func(t *testing.T, w *sharedWorkspace) func() {
			db, err := sql.Open("sqlite", "file:"+w.ws.DBPath)
			must(t, err)
			var mode string
			must(t, db.QueryRow("PRAGMA journal_mode=DELETE").Scan(&mode))
			must(t, db.Close())
			w.claim(t, nil, 1)
			return nil
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newSharedWorkspace(t)
			if done := tc.setup(t, w); done != nil {
				defer done()
			}
			before := treeState(t, w.dir)
			check := func(what string) {
				t.Helper()
				if d := treeDiff(before, treeState(t, w.dir)); d != "" {
					t.Fatalf("steward %s changed the workspace:\n%s", what, d)
				}
			}
			for _, args := range readCommands {
				if code, out := w.run(t, nil, args...); code != 0 {
					t.Fatalf("steward %v: exit %d\n%s", args, code, out)
				}
				check(strings.Join(args, " "))
			}
			w.watchBriefly(t, nil, os.Interrupt, "status", "--watch", "--json", "--no-gitea")
			check("status --watch")
			w.watchBriefly(t, nil, syscall.SIGTERM, "watch", "--json", "--no-gitea")
			check("watch")
		})
	}
}

// TestViewerReadLeavesWorkersWriting: the DB belongs to the workers' account (mode 0644,
// in a directory others may write, as a shared fleet directory is); a viewer's account
// runs every read command, and then the workers' next claim still succeeds — the
// viewer's reads created no file at all (the reported failure was the workers' claim
// refused with "attempt to write a readonly database" after a viewer's read left a -wal
// and -shm the workers could not write). It fails on the code before the fix.
func TestViewerReadLeavesWorkersWriting(t *testing.T) {
	worker := osAccount(t, "stw-test-worker")
	viewer := osAccount(t, "stw-test-viewer")
	w := newSharedWorkspace(t)
	// Everything is the workers'; the DB's directory may be written by anyone.
	must(t, filepath.WalkDir(w.dir, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, int(worker.uid), int(worker.gid))
	}))
	must(t, os.Chmod(w.dir, 0o755))
	must(t, os.Chmod(filepath.Dir(w.ws.DBPath), 0o777))
	must(t, os.Chmod(w.ws.DBPath, 0o644))
	must(t, os.Chmod(w.ws.LocksDir, 0o755))
	w.claim(t, &worker, 1)
	closeCleanly(t, w.ws.DBPath)
	before := treeState(t, w.dir)
	for _, args := range readCommands {
		if code, out := w.run(t, &viewer, args...); code != 0 {
			t.Fatalf("steward %v as the viewer: exit %d\n%s", args, code, out)
		}
	}
	w.watchBriefly(t, &viewer, os.Interrupt, "status", "--watch", "--json", "--no-gitea")
	if d := treeDiff(before, treeState(t, w.dir)); d != "" {
		t.Errorf("the viewer's reads changed the workspace:\n%s", d)
	}
	w.claim(t, &worker, 2)
	// And beside a worker that holds the DB open (its -wal and -shm there, the worker's),
	// the viewer reads through them without a write, and both workers still claim.
	live := workerServer(t, w, worker)
	for _, suffix := range []string{"-wal", "-shm"} {
		if _, err := os.Lstat(w.ws.DBPath + suffix); err != nil {
			t.Fatalf("set-up: the live worker left no %s: %v", suffix, err)
		}
	}
	mid := treeState(t, w.dir)
	for _, args := range readCommands {
		if code, out := w.run(t, &viewer, args...); code != 0 {
			t.Fatalf("steward %v as the viewer beside a live writer: exit %d\n%s", args, code, out)
		}
	}
	if d := treeDiff(mid, treeState(t, w.dir)); d != "" {
		t.Errorf("the viewer's reads beside a live writer changed the workspace:\n%s", d)
	}
	w.claim(t, &worker, 3)
	live.claim(t, 10)
}

// mcpWorker is a worker's `steward mcp` over stdio, run as the worker's account: after
// its first claim it holds the DB open, as a live worker process does.
type mcpWorker struct{ c *mcp.Client }

func workerServer(t *testing.T, w *sharedWorkspace, worker account) *mcpWorker {
	t.Helper()
	cmd := w.command(t, &worker, "mcp", "--as-role", "operator")
	c, err := mcp.Connect(context.Background(), &sdk.CommandTransport{Command: cmd}, "w-live")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	m := &mcpWorker{c: c}
	m.claim(t, 9)
	return m
}

func (m *mcpWorker) claim(t *testing.T, n int64) {
	t.Helper()
	o, err := m.c.Claim(context.Background(), mcp.ClaimArgs{Item: &mcp.ItemRef{Org: "acme", Repo: "widgets", Number: n}})
	if err != nil || o.Result != string(govern.ResultSucceeded) {
		t.Fatalf("the live worker's claim of #%d: %+v %v", n, o, err)
	}
}

// TestViewerWatchFollowsWorkers: a viewer's `steward status --watch` is open on a WAL DB
// closed cleanly that belongs to the workers when a worker process comes, holds it open and
// claims, and another worker claims through the command line: the watch shows each claim
// as it lands, both workers' claims succeed, and no file anywhere in the workspace ends
// up the viewer's. (Before the fix the watch's first read left a -wal and -shm of the
// viewer's, and the workers' claims failed.)
func TestViewerWatchFollowsWorkers(t *testing.T) {
	worker := osAccount(t, "stw-test-worker")
	viewer := osAccount(t, "stw-test-viewer")
	w := newSharedWorkspace(t)
	must(t, filepath.WalkDir(w.dir, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, int(worker.uid), int(worker.gid))
	}))
	must(t, os.Chmod(w.dir, 0o755))
	must(t, os.Chmod(filepath.Dir(w.ws.DBPath), 0o777))
	must(t, os.Chmod(w.ws.DBPath, 0o644))
	must(t, os.Chmod(w.ws.LocksDir, 0o755))
	closeCleanly(t, w.ws.DBPath)

	cmd := w.command(t, &viewer, "status", "--watch", "--json", "--no-gitea")
	out, err := cmd.StdoutPipe()
	must(t, err)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	must(t, cmd.Start())
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	lines := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	// awaitClaims reads snapshots until one shows a claim on each of the issues.
	awaitClaims := func(want ...int64) {
		t.Helper()
		deadline := time.After(30 * time.Second)
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("the viewer's watch ended: %s", stderr.String())
				}
				var s struct {
					Claims []struct {
						Item *struct{ Number int64 } `json:"item"`
					} `json:"claims"`
				}
				if json.Unmarshal([]byte(l), &s) != nil {
					continue
				}
				seen := map[int64]bool{}
				for _, c := range s.Claims {
					if c.Item != nil {
						seen[c.Item.Number] = true
					}
				}
				all := true
				for _, n := range want {
					all = all && seen[n]
				}
				if all {
					return
				}
			case <-deadline:
				t.Fatalf("the viewer's watch never showed claims on %v; stderr: %s", want, stderr.String())
			}
		}
	}
	awaitClaims() // the first snapshot: the watch has read the DB closed cleanly
	live := workerServer(t, w, worker)
	awaitClaims(9)
	w.claim(t, &worker, 2)
	awaitClaims(9, 2)
	live.claim(t, 10)
	awaitClaims(9, 2, 10)
	must(t, cmd.Process.Signal(os.Interrupt))
	for range lines {
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the viewer's watch on SIGINT: %v %s", err, stderr.String())
	}
	var viewers []string
	must(t, filepath.WalkDir(w.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(p)
		if err == nil && fi.Sys().(*syscall.Stat_t).Uid == viewer.uid {
			viewers = append(viewers, p)
		}
		return err
	}))
	if len(viewers) > 0 {
		t.Fatalf("files of the viewer's account in the workers' workspace: %v", viewers)
	}
}
