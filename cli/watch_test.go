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
	"steward/leases"
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

// TestWatchReportsWithinTwoSeconds runs `steward watch --json` (a real process) on a real
// workspace: an orphan appears (an expired lease is committed to the DB) and the `entered`
// event is printed within 2 s of the commit; the DB is removed and `unavailable` is printed
// within 2 s, the orphan is not cleared by the DB's absence, and the notify command runs
// for the human-required loss — its failure printed as notify_failed. SIGTERM stops it with
// exit 0. (Issue 18; the measured latencies are logged.)
func TestWatchReportsWithinTwoSeconds(t *testing.T) {
	dir := t.TempDir()
	ws := govern.Workspace{LocksDir: filepath.Join(dir, "locks"), DBPath: filepath.Join(dir, "db", "cp.sqlite3"), RepoRoot: filepath.Join(dir, "repo")}
	if err := govern.InitWorkspace(ws); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "watch", "--json", "--no-gitea", "--tick", "200ms", "--locks", ws.LocksDir, "--db", ws.DBPath,
		"--repo-root", ws.RepoRoot, "--audit", filepath.Join(dir, "audit.jsonl"))
	cmd.Env = cleanEnv(t, "STEWARD_TEST_AS=steward", `STEWARD_NOTIFY_COMMAND=["/nonexistent/steward-notify-test"]`)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	lines := make(chan watchEvent, 100)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			e := watchEvent{raw: sc.Text(), at: time.Now()}
			if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
				e.Event = "undecodable"
			}
			lines <- e
		}
	}()
	var seen []watchEvent
	await := func(what string, ok func(watchEvent) bool) watchEvent {
		t.Helper()
		limit := time.NewTimer(hang)
		defer limit.Stop()
		for {
			select {
			case e, open := <-lines:
				if !open {
					t.Fatalf("watch ended before %s; stderr:\n%s", what, stderr.String())
				}
				seen = append(seen, e)
				if e.Event == "undecodable" {
					t.Fatalf("an undecodable line: %q", e.raw)
				}
				if ok(e) {
					return e
				}
			case <-limit.C:
				t.Fatalf("no %s within %s; saw %v; stderr:\n%s", what, hang, seen, stderr.String())
			}
		}
	}
	await("watching", func(e watchEvent) bool { return e.Event == "watching" })

	exp := leases.FormatTime(time.Now().Add(-time.Hour))
	changed := time.Now()
	leasestest.Insert(t, ws.DBPath, []leasestest.Session{{SessionID: "s1", Role: "author"}},
		[]leasestest.Lease{{LeaseID: "L1", SessionID: "s1", Role: "author", TaskClass: "author_issue_work",
			Work: leasestest.Work(leases.KindIssue, 5), CreatedAt: exp, ExpiresAt: exp}})
	entered := await("entered orphan", func(e watchEvent) bool { return e.Event == "entered" && e.Entry.Kind == "orphan" })
	enterLatency := entered.at.Sub(changed)

	changed = time.Now()
	for _, p := range []string{ws.DBPath, ws.DBPath + "-wal", ws.DBPath + "-shm"} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
	}
	unavail := await("unavailable db", func(e watchEvent) bool { return e.Event == "unavailable" && e.Entry.Key == "source:db" })
	lossLatency := unavail.at.Sub(changed)
	if !unavail.Notify || unavail.Entry.Need != "human-required" {
		t.Errorf("the lost source does not notify: %q", unavail.raw)
	}
	failed := await("notify_failed", func(e watchEvent) bool { return e.Event == "notify_failed" })
	if !strings.Contains(failed.NotifyError, "/nonexistent/steward-notify-test") {
		t.Errorf("notify_failed without its reason: %q", failed.raw)
	}
	for _, e := range seen {
		if e.Event == "cleared" {
			t.Fatalf("the orphan was cleared by the DB's absence: %q", e.raw)
		}
	}
	t.Logf("steward watch latency: entered %s after the commit, unavailable %s after the DB was removed", enterLatency.Round(time.Millisecond), lossLatency.Round(time.Millisecond))
	if enterLatency > 2*time.Second || lossLatency > 2*time.Second {
		t.Errorf("over the 2 s bound: entered %s, unavailable %s", enterLatency, lossLatency)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	for range lines {
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("watch did not exit 0 on SIGTERM: %v\n%s", err, stderr.String())
	}
}

// TestWatchExitsWhenNothingCanBeRead: no configured source can be read on start: exit 5
// with the reasons, and no event.
func TestWatchExitsWhenNothingCanBeRead(t *testing.T) {
	dir := t.TempDir()
	var out, errb strings.Builder
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	code := Main([]string{"watch", "--json", "--no-gitea", "--locks", filepath.Join(dir, "missing"), "--db", filepath.Join(dir, "missing.sqlite3"),
		"--repo-root", dir, "--audit", filepath.Join(dir, "audit.jsonl")}, &out, &errb)
	if code != exitWatchUnavailable || out.Len() != 0 || !strings.Contains(errb.String(), "no configured source can be read") {
		t.Fatalf("exit %d, out %q, err %q", code, out.String(), errb.String())
	}
}
