package cli

import (
	"bytes"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"steward/govern"
	"steward/govern/actionid"
	"steward/leases"
	"steward/leases/leaserec"
)

// childrenOf lists the live processes whose parent is pid (from /proc).
func childrenOf(t *testing.T, pid int) []string {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatalf("read /proc: %v", err)
	}
	var out []string
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "status"))
		if err != nil {
			continue
		}
		var name string
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "Name:\t"); ok {
				name = v
			}
			if v, ok := strings.CutPrefix(line, "PPid:\t"); ok && v == strconv.Itoa(pid) {
				out = append(out, e.Name()+" "+name)
			}
		}
	}
	return out
}

func runDemoJSON(t *testing.T, args ...string) demoReport {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(append([]string{"demo", "--headless", "--json"}, args...), &out, &errb)
	if code != ExitOK {
		t.Fatalf("steward demo %v: exit %d: %s", args, code, errb.String())
	}
	var r demoReport
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("decode --json: %v\n%s", err, out.String())
	}
	return r
}

// TestDemoStartStopLeavesNothing starts and stops the demo 20 times and checks that no
// worker process, temp folder or listening port is left behind.
func TestDemoStartStopLeavesNothing(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Fatalf("this test reads /proc: %v", err)
	}
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	before := len(childrenOf(t, os.Getpid()))
	started := 0
	for i := range 20 {
		r := runDemoJSON(t, "--for", "400ms", "--speed", "120", "--seed", strconv.Itoa(i+1))
		if r.Summary.Counts["claim"] == 0 || len(r.Summary.PIDs) == 0 {
			t.Fatalf("run %d: no claims or no worker processes: %+v", i, r.Summary.Counts)
		}
		started += len(r.Summary.PIDs)
		for _, pid := range r.Summary.PIDs {
			if err := syscall.Kill(pid, 0); err == nil {
				t.Fatalf("run %d: worker process %d still exists", i, pid)
			}
		}
		if kids := childrenOf(t, os.Getpid()); len(kids) > before {
			t.Fatalf("run %d: child processes left: %v", i, kids)
		}
		if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
			t.Fatalf("run %d: left in the temp folder: %v", i, ents)
		}
		if c, err := net.DialTimeout("tcp", r.GiteaAddr, time.Second); err == nil {
			c.Close()
			t.Fatalf("run %d: Gitea port %s still accepts connections", i, r.GiteaAddr)
		}
	}
	t.Logf("20 runs, %d worker processes started and gone, temp folder empty, ports closed", started)
}

// TestDemoKeep keeps the workspace and checks that it holds what the run reported, read
// back through the DB reader and through `steward status --json`: live claims, and
// claim.refused events for the contention.
func TestDemoKeep(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	r := runDemoJSON(t, "--for", "2s", "--speed", "120", "--keep")
	if !r.Kept || !strings.HasPrefix(r.Root, tmp) {
		t.Fatalf("kept %v at %q, want a folder under %s", r.Kept, r.Root, tmp)
	}
	rd, err := leases.OpenReadOnly(r.DBPath)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	snap, err := rd.Snapshot(t.Context(), leases.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	active := 0
	for _, l := range snap.Leases {
		if l.Status == leaserec.StatusActive {
			active++
		}
	}
	evs, _, err := rd.EventsSince(t.Context(), 0, 100000)
	if err != nil {
		t.Fatal(err)
	}
	refused := 0
	for _, e := range evs {
		if e.EventType == "claim.refused" {
			refused++
		}
	}
	if active == 0 || refused == 0 {
		t.Fatalf("kept DB has %d active leases and %d claim.refused events; want both", active, refused)
	}
	if got := r.Summary.Counts["claim-refused"]; got < refused {
		t.Errorf("summary counts %d refusals, DB has %d claim.refused events", got, refused)
	}
	var text bytes.Buffer
	writeKeep(&text, r)
	for _, want := range []string{"steward --config " + r.Config + " status", r.DBPath} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("--keep output lacks %q:\n%s", want, text.String())
		}
	}
	code, out := run(t, "status", "--json", "--no-gitea", "--locks", r.LocksDir, "--db", r.DBPath, "--repo-root", r.RepoRoot)
	var st struct {
		Claims     []map[string]any `json:"claims"`
		Contention []map[string]any `json:"contention"`
	}
	if code != ExitOK || json.Unmarshal([]byte(out), &st) != nil {
		t.Fatalf("status --json on the kept workspace: %d\n%s", code, out)
	}
	kinds := map[any]int{}
	for _, c := range st.Contention {
		kinds[c["kind"]]++
	}
	if len(st.Claims) == 0 || kinds["claim-refused"] == 0 {
		t.Fatalf("status on the kept workspace: %d claims, contention %v", len(st.Claims), kinds)
	}
}

// TestDemoWorkersSpeakMCP runs the demo with --workers mcp: the whole fleet goes through one
// steward mcp process — every worker attempt in the audit log names its session as the
// actor and was made by that process (not by the demo's own per-worker cores, which record
// the worker's name as the Gitea login) — claims, heartbeats and contention happen, and the
// server is gone afterwards.
func TestDemoWorkersSpeakMCP(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	t.Setenv("STEWARD_TEST_AS", "steward") // the demo starts this executable as steward mcp
	before := len(childrenOf(t, os.Getpid()))
	r := runDemoJSON(t, "--workers", "mcp:6", "--for", "8s", "--speed", "30", "--keep")
	if r.Summary.Counts["claim"] == 0 || r.Summary.Counts["heartbeat"] == 0 || r.Summary.Counts["error"] != 0 {
		t.Fatalf("counts %v: want claims and heartbeats and no errors; errors:\n%s", r.Summary.Counts, strings.Join(r.Summary.Errors, "\n"))
	}
	recs, finds, err := govern.ReadAudit(r.AuditLog)
	if err != nil || len(finds) > 0 || len(recs) == 0 {
		t.Fatalf("audit: %d records %v %v", len(recs), finds, err)
	}
	actions := map[string]int{}
	for _, a := range govern.Attempts(recs) {
		if a.Outcome == nil || a.Outcomes != 1 {
			t.Fatalf("attempt %s has %d outcomes", a.ID, a.Outcomes)
		}
		act := a.Outcome.Actor
		if !strings.HasPrefix(act.Session, "sim-worker-") || strings.HasPrefix(act.GiteaLogin, "sim-worker-") {
			t.Fatalf("attempt %s (%s) was not made through steward mcp: actor %+v", a.ID, a.Outcome.Action, act)
		}
		actions[a.Outcome.Action]++
	}
	if actions[actionid.Claim] == 0 || actions[actionid.Heartbeat] == 0 {
		t.Fatalf("attempts by action: %v", actions)
	}
	if kids := childrenOf(t, os.Getpid()); len(kids) > before {
		t.Fatalf("child processes left: %v", kids)
	}
	if b, err := os.ReadFile(filepath.Join(r.Root, "mcp.log")); err != nil || strings.Contains(string(b), "panic") {
		t.Fatalf("steward mcp log: %v\n%s", err, b)
	}
	// Every claim went through steward mcp, bound to a claim token the worker passed back on
	// every heartbeat (none was refused: no errors above); no token reached a log.
	for _, p := range []string{filepath.Join(r.Root, "mcp.log"), r.AuditLog} {
		if b, err := os.ReadFile(p); err != nil || strings.Contains(string(b), "stw_ct_") {
			t.Fatalf("%s holds a claim token (%v)", p, err)
		}
	}
	if fi, err := os.Stat(filepath.Join(r.Root, "mcp.token")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v %v", fi, err)
	}
	t.Logf("through MCP: %v; events %v", actions, r.Summary.Counts)
}

func TestWorkersFlag(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		mcp  bool
		fail bool
	}{{"8", 8, false, false}, {"mcp", 8, true, false}, {"mcp:3", 3, true, false}, {"core:2", 2, false, false},
		{"0", 0, false, true}, {"mcp:0", 0, false, true}, {"grpc", 0, false, true}, {"mcp:x", 0, false, true}} {
		var w workersFlag
		err := w.Set(tc.in)
		if (err != nil) != tc.fail || !tc.fail && (w.n != tc.n || w.mcp != tc.mcp) {
			t.Errorf("--workers %s: %+v %v", tc.in, w, err)
		}
	}
}
