package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The config file's workspace feeds every command; a flag still wins over it.
func TestConfigFileFeedsCommands(t *testing.T) {
	ws := cliWorkspace(t) // --locks L --db D --repo-root R --audit A
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	body := "default_workspace: w\nworkspaces:\n  w:\n    locks_dir: " + ws[1] + "\n    db_path: " + ws[3] +
		"\n    repo_root: " + ws[5] + "\n    audit_log: " + ws[7] + "\nroles:\n  maint: operator\n"
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("STEWARD_ROLE", "")
	// No workspace flags: the file names the DB with the expired lease, and the login's role.
	code, out := run(t, "lease", "reclaim-expired", "--lease", "L1", "--dry-run", "--config", cfg, "--login", "maint")
	if code != ExitOK || !strings.Contains(out, "allowed") {
		t.Fatalf("from the config file: %d\n%s", code, out)
	}
	// A flag overrides the file: a DB that does not exist is unavailable, never empty.
	code, out = run(t, "lease", "reclaim-expired", "--lease", "L1", "--dry-run", "--config", cfg, "--db", filepath.Join(dir, "missing.sqlite3"))
	if code == ExitOK || !strings.Contains(out, "missing.sqlite3") {
		t.Fatalf("flag over file: %d\n%s", code, out)
	}
	// A broken config file stops the command.
	if err := os.WriteFile(cfg, []byte("workspaces: [\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out = run(t, "lease", "expire-sweep", "--dry-run", "--config", cfg); code != ExitError || !strings.Contains(out, "config") {
		t.Fatalf("broken config: %d\n%s", code, out)
	}
}
