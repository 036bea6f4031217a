package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"steward/config"
)

// TestConfigLeasePolicyNames: a lease_policy value for a class or field the lease policy does
// not know, or for a field that cannot be overridden, is an error `config check` names, and a
// command that reads the workspace refuses to run on it rather than judge by a policy the
// file did not mean; a known one is listed with its origin.
func TestConfigLeasePolicyNames(t *testing.T) {
	locks, db, repo, audit := goodWorkspace(t)
	ws := fmt.Sprintf("workspaces:\n  w:\n    locks_dir: %s\n    db_path: %s\n    repo_root: %s\n    audit_log: %s\n    lease_policy:\n", locks, db, repo, audit)
	for _, tc := range []struct{ entry, want string }{
		{"      author_issue_work:\n        initial_ttl_minutes: 0.5\n", ""},
		{"      author_work:\n        initial_ttl_minutes: 0.5\n", `"author_work" is not a task class`},
		{"      author_issue_work:\n        ttl_minutes: 0.5\n", `"ttl_minutes" is not a field`},
		{"      author_issue_work:\n        heartbeat_lifecycle_active: 1\n", `"heartbeat_lifecycle_active" is not a field`},
	} {
		code, v, out := configCheck(t, ws+tc.entry, "--offline")
		errs := problemsOf(v, config.SevError)
		if tc.want == "" {
			if code != ExitOK || len(errs) != 0 {
				t.Errorf("%q: exit %d, errors %v", tc.entry, code, errs)
			}
			if !strings.Contains(out, "lease_policy.author_issue_work.initial_ttl_minutes") {
				t.Errorf("config check does not list the value:\n%s", out)
			}
			continue
		}
		if code == ExitOK || !strings.Contains(errs["bad-lease-policy"], tc.want) {
			t.Errorf("%q: exit %d, errors %v; want bad-lease-policy %s", tc.entry, code, errs, tc.want)
		}
		p := filepath.Join(t.TempDir(), "config.yaml")
		if err := os.WriteFile(p, []byte(ws+tc.entry), 0o600); err != nil {
			t.Fatal(err)
		}
		if code, out := run(t, "--config", p, "status", "--no-gitea"); code != ExitError || !strings.Contains(out, tc.want) {
			t.Errorf("status on %q: exit %d\n%s", tc.entry, code, out)
		}
	}
}
