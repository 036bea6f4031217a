package cli

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"steward/govern"
	"steward/leases/leaserec"
	"steward/leases/leasestest"
)

// watchEvent is what the test reads of a `steward watch --json` line, with when it arrived.
type watchEvent struct {
	Event string `json:"event"`
	Entry struct {
		Key  string `json:"key"`
		Kind string `json:"kind"`
		Need string `json:"need"`
	} `json:"entry"`
	NotifyError string `json:"notify_error"`
	Notify      bool   `json:"notify"`
	raw         string
	at          time.Time
}

// hang is the hang detector of the waits below: generous, never a budget.
const hang = time.Minute

// watchProc is a `steward watch --json` process (the test binary as steward) and the
// lines it printed so far.
type watchProc struct {
	t      testing.TB
	cmd    *exec.Cmd
	lines  chan watchEvent
	stderr *strings.Builder
	seen   []watchEvent
}

// noResync is the live model's periodic full read in the watch processes of these tests:
// longer than the hang limit of their waits, so an event they see came from the change
// itself (a watcher, an access check), never from the resync that would also report it.
const noResync = "STEWARD_TEST_RESYNC=2h"

// startWatch starts `steward watch --json --no-gitea` with args and the extra environment
// env, without the periodic resync (noResync). Unprivileged, it runs without the
// capabilities that let root read what its permissions forbid (setpriv drops
// CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH when the test runs as root), so that a
// permission taken away is one for it.
func startWatch(t testing.TB, unprivileged bool, args []string, env ...string) *watchProc {
	t.Helper()
	argv := append([]string{os.Args[0], "watch", "--json", "--no-gitea"}, args...)
	if unprivileged && os.Geteuid() == 0 {
		setpriv, err := exec.LookPath("setpriv")
		if err != nil {
			t.Fatalf("the test runs as root and needs setpriv (util-linux) to drop root's file capabilities: %v", err)
		}
		argv = append([]string{setpriv, "--bounding-set=-dac_override,-dac_read_search"}, argv...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = cleanEnv(t, append([]string{"STEWARD_TEST_AS=steward", noResync}, env...)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	w := &watchProc{t: t, cmd: cmd, lines: make(chan watchEvent, 100), stderr: &strings.Builder{}}
	cmd.Stderr = w.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	go func() {
		defer close(w.lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			e := watchEvent{raw: sc.Text(), at: time.Now()}
			if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
				e.Event = "undecodable"
			}
			w.lines <- e
		}
	}()
	return w
}

// await reads lines until one satisfies ok (failing on an undecodable line, the end of
// the process, or the hang limit).
func (w *watchProc) await(what string, ok func(watchEvent) bool) watchEvent {
	w.t.Helper()
	limit := time.NewTimer(hang)
	defer limit.Stop()
	for {
		select {
		case e, open := <-w.lines:
			if !open {
				w.t.Fatalf("watch ended before %s; stderr:\n%s", what, w.stderr.String())
			}
			w.seen = append(w.seen, e)
			if e.Event == "undecodable" {
				w.t.Fatalf("an undecodable line: %q", e.raw)
			}
			if ok(e) {
				return e
			}
		case <-limit.C:
			w.t.Fatalf("no %s within %s; saw %v; stderr:\n%s", what, hang, w.seen, w.stderr.String())
		}
	}
}

// stop sends SIGTERM, reads the rest of the output, and fails unless watch exits 0.
func (w *watchProc) stop() {
	w.t.Helper()
	if err := w.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		w.t.Fatal(err)
	}
	for e := range w.lines {
		w.seen = append(w.seen, e)
	}
	if err := w.cmd.Wait(); err != nil {
		w.t.Fatalf("watch did not exit 0 on SIGTERM: %v\n%s", err, w.stderr.String())
	}
}

// TestWatchReportsAnOrphanAndALostSource runs `steward watch --json` (a real process) on a
// real workspace without the periodic resync: an orphan appears (an expired lease is
// committed to the DB) and the `entered` event is printed; the DB is removed and
// `unavailable` is printed, the orphan is not cleared by the DB's absence, and the notify
// command runs for the human-required loss — its failure printed as notify_failed. SIGTERM
// stops it with exit 0. How soon the events come is BenchmarkWatchLatency's to measure.
func TestWatchReportsAnOrphanAndALostSource(t *testing.T) {
	ws := watchWorkspace(t)
	w := startWatch(t, false, []string{"--tick", "200ms", "--locks", ws.LocksDir, "--db", ws.DBPath,
		"--repo-root", ws.RepoRoot, "--audit", filepath.Join(filepath.Dir(ws.LocksDir), "audit.jsonl")}, `STEWARD_NOTIFY_COMMAND=["/nonexistent/steward-notify-test"]`)
	w.await("watching", func(e watchEvent) bool { return e.Event == "watching" })

	expiredLease(t, ws, "L1", 5)
	w.await("entered orphan", func(e watchEvent) bool {
		return e.Event == "entered" && e.Entry.Key == "orphan:active-lease-past-expiry:L1"
	})

	removeDB(t, ws)
	unavail := w.await("unavailable db", func(e watchEvent) bool { return e.Event == "unavailable" && e.Entry.Key == "source:db" })
	if !unavail.Notify || unavail.Entry.Need != "human-required" {
		t.Errorf("the lost source does not notify: %q", unavail.raw)
	}
	failed := w.await("notify_failed", func(e watchEvent) bool { return e.Event == "notify_failed" })
	if !strings.Contains(failed.NotifyError, "/nonexistent/steward-notify-test") {
		t.Errorf("notify_failed without its reason: %q", failed.raw)
	}
	w.stop()
	for _, e := range w.seen {
		if e.Event == "cleared" {
			t.Fatalf("the orphan was cleared by the DB's absence: %q", e.raw)
		}
	}
}

// watchWorkspace is a fresh workspace: lock directory, migrated SQLite DB, repository root.
func watchWorkspace(t testing.TB) govern.Workspace {
	t.Helper()
	dir := t.TempDir()
	ws := govern.Workspace{LocksDir: filepath.Join(dir, "locks"), DBPath: filepath.Join(dir, "db", "cp.sqlite3"), RepoRoot: filepath.Join(dir, "repo")}
	if err := govern.InitWorkspace(ws); err != nil {
		t.Fatal(err)
	}
	return ws
}

// expiredLease commits a lease on item n that expired an hour ago: an orphan.
func expiredLease(t testing.TB, ws govern.Workspace, id string, n int64) {
	t.Helper()
	exp := leaserec.FormatTime(time.Now().Add(-time.Hour))
	leasestest.Insert(t, ws.DBPath, []leasestest.Session{{SessionID: "s-" + id, Role: "author"}},
		[]leasestest.Lease{{LeaseID: id, SessionID: "s-" + id, Role: "author", TaskClass: "author_issue_work",
			Work: leasestest.Work(leaserec.KindIssue, n), CreatedAt: exp, ExpiresAt: exp}})
}

// removeDB removes the control-plane DB and its WAL files.
func removeDB(t testing.TB, ws govern.Workspace) {
	t.Helper()
	for _, p := range []string{ws.DBPath, ws.DBPath + "-wal", ws.DBPath + "-shm"} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
	}
}

// TestWatchReportsAPermissionLossAtOnce runs `steward watch --json` without root's file
// capabilities on a real workspace, and without the periodic resync, and takes away, then
// gives back, the permission on the lock directory (chmod 000) and on the DB file. Each
// loss is an `unavailable` event and each return a `recovered` one — never the last "ok"
// view kept on through the outage. Before the fix the lock directory's loss waited for the
// 30 s resync (the directory's mode change names no lock file: without the resync it never
// came), and the DB's was never seen: the reader held open went on reading a file no new
// reader could open. How soon the events come is BenchmarkWatchLatency's to measure.
func TestWatchReportsAPermissionLossAtOnce(t *testing.T) {
	dir := t.TempDir()
	ws := govern.Workspace{LocksDir: filepath.Join(dir, "locks"), DBPath: filepath.Join(dir, "db", "cp.sqlite3"), RepoRoot: filepath.Join(dir, "repo")}
	if err := govern.InitWorkspace(ws); err != nil {
		t.Fatal(err)
	}
	// The watching process must be able to reach everything before the test takes it away.
	for _, p := range []string{dir, filepath.Dir(ws.DBPath), ws.LocksDir, ws.RepoRoot} {
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	w := startWatch(t, true, []string{"--tick", "200ms", "--locks", ws.LocksDir, "--db", ws.DBPath,
		"--repo-root", ws.RepoRoot, "--audit", filepath.Join(dir, "audit.jsonl")})
	w.await("watching", func(e watchEvent) bool {
		return e.Event == "watching" && strings.Contains(e.raw, `"locks":"ok"`) && strings.Contains(e.raw, `"db":"ok"`)
	})
	for _, c := range []struct {
		source, path string
		mode         os.FileMode
	}{{"locks", ws.LocksDir, 0o755}, {"db", ws.DBPath, 0o644}} {
		key := "source:" + c.source
		if err := os.Chmod(c.path, 0); err != nil {
			t.Fatal(err)
		}
		lost := w.await(key+" unavailable", func(e watchEvent) bool { return e.Event == "unavailable" && e.Entry.Key == key })
		if !strings.Contains(lost.raw, "permission denied") {
			t.Errorf("the %s loss does not say why: %q", c.source, lost.raw)
		}
		if err := os.Chmod(c.path, c.mode); err != nil {
			t.Fatal(err)
		}
		w.await(key+" recovered", func(e watchEvent) bool { return e.Event == "recovered" && e.Entry.Key == key })
	}
	w.stop()
}

// waitFor polls ok until it holds, failing after limit (a hang detector, never a budget).
func waitFor(t *testing.T, limit time.Duration, what string, ok func() bool) {
	t.Helper()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	end := time.NewTimer(limit)
	defer end.Stop()
	for !ok() {
		select {
		case <-tick.C:
		case <-end.C:
			t.Fatalf("no %s within %s", what, limit)
		}
	}
}
