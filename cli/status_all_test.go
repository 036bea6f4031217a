package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStatusAllWorkspaces: status reads several workspaces of one config file
// — two real workspaces (each its own lock directory and SQLite DB) and a third
// whose lock directory is on another host. --all reports every one under its name (text,
// and the documented JSON shape), --workspace NAME one, and the exit code is the worst: 5
// once any workspace's configured source is unavailable, naming the workspace.
func TestStatusAllWorkspaces(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"alpha", "beta"} {
		if err := os.CopyFS(filepath.Join(dir, n), os.DirFS("../testdata/workspace")); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(dir, n, "repo", "branches"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// beta holds one lock fewer than alpha: each workspace reads its own directory.
	locks, _ := filepath.Glob(filepath.Join(dir, "beta", "locks", "*.json"))
	if len(locks) == 0 {
		t.Fatal("no lock in the sample")
	}
	if err := os.Remove(locks[0]); err != nil {
		t.Fatal(err)
	}
	ws := func(name, d, extra string) string {
		return "  " + name + ":\n    locks_dir: " + d + "/locks\n    db_path: " + d + "/control_plane.sqlite3\n    repo_root: " + d + "/repo\n    audit_log: " + d + "/audit.jsonl\n" + extra
	}
	body := "default_workspace: alpha\nworkspaces:\n" + ws("alpha", filepath.Join(dir, "alpha"), "") + ws("beta", filepath.Join(dir, "beta"), "") +
		ws("gamma", filepath.Join(dir, "alpha"), "    host: build-02\n")
	cfg := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	base := []string{"status", "--config", cfg, "--no-gitea", "--now", "2026-07-23T10:05:00Z"}
	var out, errb bytes.Buffer
	if code := Main(append(base, "--all", "--json"), &out, &errb); code != ExitOK {
		t.Fatalf("--all --json: exit %d: %s", code, errb.String())
	}
	var doc struct {
		Workspaces []struct {
			Name     string `json:"name"`
			Host     string `json:"host"`
			Snapshot struct {
				Sources map[string]struct {
					Status string `json:"status"`
				} `json:"sources"`
				Claims []struct {
					LockFile string `json:"lock_file"`
				} `json:"claims"`
			} `json:"snapshot"`
		} `json:"workspaces"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("--all --json is not one JSON document: %v\n%s", err, out.String())
	}
	got := map[string]string{}
	var names []string
	for _, w := range doc.Workspaces {
		names = append(names, w.Name)
		n := 0
		for _, c := range w.Snapshot.Claims {
			if c.LockFile != "" {
				n++
			}
		}
		got[w.Name] = w.Snapshot.Sources["locks"].Status + "," + w.Snapshot.Sources["db"].Status + "," + string(rune('0'+n)) + "," + w.Host
	}
	want := map[string]string{"alpha": "ok,ok,5,", "beta": "ok,ok,4,", "gamma": "not_observed,ok,0,build-02"}
	if strings.Join(names, ",") != "alpha,beta,gamma" {
		t.Fatalf("workspaces %v", names)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: locks,db,claims of a lock,host = %s, want %s", k, got[k], v)
		}
	}
	// Text: each under its name.
	out.Reset()
	errb.Reset()
	if code := Main(append(base, "--all"), &out, &errb); code != ExitOK {
		t.Fatalf("--all: exit %d: %s", code, errb.String())
	}
	for _, h := range []string{"== workspace alpha ==", "== workspace beta ==", "== workspace gamma (lock directory on build-02) ==", "not_observed"} {
		if !strings.Contains(out.String(), h) {
			t.Errorf("--all text lacks %q:\n%s", h, out.String())
		}
	}
	// --workspace picks one.
	out.Reset()
	if code := Main(append(base, "--workspace", "beta", "--json"), &out, &errb); code != ExitOK {
		t.Fatalf("--workspace beta: exit %d", code)
	}
	var one struct {
		Claims []struct {
			LockFile string `json:"lock_file"`
		} `json:"claims"`
	}
	if err := json.Unmarshal(out.Bytes(), &one); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range one.Claims {
		if c.LockFile != "" {
			n++
		}
	}
	if n != 4 {
		t.Fatalf("--workspace beta: %d claims of a lock, want beta's 4", n)
	}
	// One workspace's DB gone: 5, naming it, the others still reported.
	if err := os.Remove(filepath.Join(dir, "beta", "control_plane.sqlite3")); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	errb.Reset()
	if code := Main(append(base, "--all", "--json"), &out, &errb); code != ExitSourceUnavailable || !strings.Contains(errb.String(), "workspace beta: ") || !json.Valid(out.Bytes()) {
		t.Fatalf("beta's DB gone: exit %d, stderr %q", code, errb.String())
	}
	out.Reset()
	if code := Main(append(base, "--all", "--watch"), &out, &errb); code != ExitError {
		t.Fatalf("--all --watch: exit %d", code)
	}
}
