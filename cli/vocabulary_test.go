package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"steward/govern"
	"steward/govern/actionid"
	"steward/model"
)

// TestAuditNamesTheWorker: `steward audit` names the worker an attempt was made for — the
// session of a core bound to it (steward mcp, the CLI's worker commands) or the login a
// simulated worker's core acts as — never the OS user the fleet's processes share (before,
// the workbench said sim-worker-8 where `steward audit` said root).
func TestAuditNamesTheWorker(t *testing.T) {
	ws := cliWorkspace(t)
	gws := govern.Workspace{LocksDir: ws[1], DBPath: ws[3], RepoRoot: ws[5]}
	log, err := govern.OpenAudit(ws[len(ws)-1], nil)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	// A simulated worker's own core acts as its login (sim.newWorker).
	simCore := govern.New(gws, log, govern.Options{Actor: govern.LocalActor(govern.RoleOperator, "sim-worker-8")})
	defer simCore.Close()
	claim := govern.Request{Action: actionid.Claim, Target: govern.Target{Session: "sim-worker-8-s1",
		Item: &govern.Item{Remote: "origin", Org: "acme", Repo: "widgets", Kind: "issue", Number: 11}}, Params: govern.ClaimParams{Role: "author"}}
	if _, out, err := simCore.Run(context.Background(), claim, ""); err != nil || out.Result != govern.ResultSucceeded {
		t.Fatalf("sim worker's claim: %v %+v", err, out)
	}
	// A core bound to a worker session (steward mcp) with no login of its own.
	mcpCore := govern.New(gws, log, govern.Options{Actor: govern.LocalActor(govern.RoleOperator, "")})
	defer mcpCore.Close()
	claim.Target.Session, claim.Target.Item.Number = "mcp-worker-3-s2", 12
	if _, out, err := mcpCore.ForSession("mcp-worker-3-s2").Run(context.Background(), claim, ""); err != nil || out.Result != govern.ResultSucceeded {
		t.Fatalf("mcp worker's claim: %v %+v", err, out)
	}
	code, out := run(t, append([]string{"audit"}, ws...)...)
	if code != ExitOK {
		t.Fatalf("audit: %d\n%s", code, out)
	}
	// Each attempt's line ends with its actor and its result (its target names the session
	// too, so the actor is read from its column).
	var actors []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && strings.Contains(l, " worker.claim ") {
			actors = append(actors, f[len(f)-2])
		}
	}
	if strings.Join(actors, ",") != "sim-worker-8,mcp-worker-3-s2" {
		t.Fatalf("steward audit must name the workers (read %q):\n%s", actors, out)
	}
	if u, err := user.Current(); err == nil && strings.Contains(out, " "+u.Username+" ") {
		t.Fatalf("steward audit names the OS user %q for a worker's attempt:\n%s", u.Username, out)
	}
}

// TestWorkerReleasesTwice: a worker script repeating its own release exits 0 and reads
// "already released" (it exited 3, refused, and the script took it for a failure).
func TestWorkerReleasesTwice(t *testing.T) {
	ws := cliWorkspace(t)
	code, out := run(t, append([]string{"claim", "--org", "acme", "--repo", "widgets", "--number", "9", "--session", "w1", "--as-role", "operator", "--json"}, ws...)...)
	var claim govern.Outcome
	if code != ExitOK || json.Unmarshal([]byte(out), &claim) != nil {
		t.Fatalf("claim: %d\n%s", code, out)
	}
	rel := append([]string{"release", "--lease", claim.Detail["lease_id"], "--session", "w1", "--as-role", "operator"}, ws...)
	if code, out := run(t, rel...); code != ExitOK || strings.Contains(out, "already released") {
		t.Fatalf("release: %d\n%s", code, out)
	}
	if code, out := run(t, rel...); code != ExitOK || !strings.Contains(out, "already released") {
		t.Fatalf("the same release again: exit %d, want 0 and \"already released\"\n%s", code, out)
	}
	if code, out := run(t, append([]string{"release", "--lease", claim.Detail["lease_id"], "--session", "w2", "--as-role", "operator"}, ws...)...); code != ExitRefused || !strings.Contains(out, "not_owner") {
		t.Fatalf("another session's release: exit %d, want 3 not_owner\n%s", code, out)
	}
}

// TestStatusSpeaksTheWorkbenchUnits: `steward status` writes windows and ages in the
// workbench's words (model.Span: 1h00m, 5m00s) — it said "2 refused in 3600s" where the
// workbench's column said 1h00m.
func TestStatusSpeaksTheWorkbenchUnits(t *testing.T) {
	code, out := run(t, "status", "--no-gitea", "--now", "2026-07-23T10:05:00Z", "--locks", "../testdata/workspace/locks",
		"--db", "../testdata/workspace/control_plane.sqlite3", "--repo-root", "../testdata/workspace/repo")
	if code != ExitOK {
		t.Fatalf("status: %d\n%s", code, out)
	}
	for _, want := range []string{"2 refused in the last " + model.Span(time.Hour), "heartbeat 5m00s ago", "expires in 1h55m", "expires 3m00s ago"} {
		if !strings.Contains(out, want) {
			t.Errorf("status text lacks %q:\n%s", want, out)
		}
	}
}

// TestReadingCommandsShareFlags: `status` suggests --no-gitea, and `ui --no-gitea` was an
// unknown flag. Every reading command takes it.
func TestReadingCommandsShareFlags(t *testing.T) {
	for _, cmd := range []string{"status", "ui"} {
		var out, errb bytes.Buffer
		if code := Main([]string{cmd, "--no-gitea", "--help"}, &out, &errb); code != ExitOK || !strings.Contains(out.String(), "--no-gitea") {
			t.Errorf("steward %s --no-gitea: exit %d: %s", cmd, code, errb.String())
		}
	}
}

// TestStatusUsesTheConfiguredWindow: with thresholds.contention_window in the file, `config
// check` said "10m (file)" and `status` reported window_s 3600 (six settings
// were used by nothing).
func TestStatusUsesTheConfiguredWindow(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, []byte("thresholds:\n  contention_window: 30m\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := Main([]string{"status", "--json", "--no-gitea", "--now", "2026-07-23T10:05:00Z", "--config", cfg,
		"--locks", "../testdata/workspace/locks", "--db", "../testdata/workspace/control_plane.sqlite3",
		"--repo-root", "../testdata/workspace/repo"}, &out, &errb)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var s struct {
		Contention []struct {
			Kind    string `json:"kind"`
			WindowS int64  `json:"window_s"`
		} `json:"contention"`
	}
	if err := json.Unmarshal(out.Bytes(), &s); err != nil {
		t.Fatal(err)
	}
	if len(s.Contention) == 0 || s.Contention[0].WindowS != 1800 {
		t.Fatalf("contention %+v: want the configured 30m window (window_s 1800)", s.Contention)
	}
}
