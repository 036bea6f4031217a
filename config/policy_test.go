package config

import (
	"strings"
	"testing"
)

// TestLeasePolicyFromTheFile: a workspace's lease_policy reads as the variables it stands
// for, a variable that is set wins over the file (as for the workers' tools), each value is
// a setting with its origin, and a bad value is an error that names it.
func TestLeasePolicyFromTheFile(t *testing.T) {
	p := write(t, `workspaces:
  fast:
    locks_dir: /l
    lease_policy:
      author_issue_work:
        initial_ttl_minutes: 0.5
        heartbeat_cadence_minutes: 0.1
        stale_warning_minutes: 1.25
        absolute_cap_hours: 90
`, 0o600)
	r, err := Load(Inputs{Path: p, Getenv: env(map[string]string{"GITEA_LEASE_POLICY_AUTHOR_ISSUE_WORK_HEARTBEAT_CADENCE_MINUTES": "0.2"})})
	if err != nil || r.HasErrors() {
		t.Fatalf("load: %v %v", err, r.Problems)
	}
	look := r.PolicyLookup(env(map[string]string{"GITEA_LEASE_POLICY_AUTHOR_ISSUE_WORK_HEARTBEAT_CADENCE_MINUTES": "0.2"}))
	for k, want := range map[string]string{
		"GITEA_LEASE_POLICY_AUTHOR_ISSUE_WORK_INITIAL_TTL_MINUTES":       "0.5",
		"GITEA_LEASE_POLICY_AUTHOR_ISSUE_WORK_HEARTBEAT_CADENCE_MINUTES": "0.2",
		// Every digit the file wrote, and no exponent: as the workers' tools would read it.
		"GITEA_LEASE_POLICY_AUTHOR_ISSUE_WORK_STALE_WARNING_MINUTES": "1.25",
		"GITEA_LEASE_POLICY_AUTHOR_ISSUE_WORK_ABSOLUTE_CAP_HOURS":    "90",
	} {
		if v, ok := look(k); !ok || v != want {
			t.Errorf("%s = %q, %v; want %q", k, v, ok, want)
		}
	}
	if _, ok := look("GITEA_LEASE_POLICY_REVIEWER_PR_INITIAL_TTL_MINUTES"); ok {
		t.Error("a value nobody set was found")
	}
	ttl := r.Get("lease_policy.author_issue_work.initial_ttl_minutes")
	cad := r.Get("lease_policy.author_issue_work.heartbeat_cadence_minutes")
	if ttl.Source != FromFile || ttl.Origin != "workspaces.fast.lease_policy.author_issue_work.initial_ttl_minutes" || ttl.Value != "0.5" {
		t.Errorf("ttl setting: %+v", ttl)
	}
	if cad.Source != fromEnv || cad.Value != "0.2" {
		t.Errorf("cadence setting: %+v (the variable wins)", cad)
	}

	for _, bad := range []string{"initial_ttl_minutes: 0", "initial_ttl_minutes: -1", "initial_ttl_minutes: .nan", "Initial-TTL: 1", "initial_ttl_minutes: soon"} {
		p := write(t, "workspaces:\n  w:\n    lease_policy:\n      author_issue_work:\n        "+bad+"\n", 0o600)
		r, err := Load(Inputs{Path: p, Getenv: env(nil)})
		if err != nil {
			t.Fatal(err)
		}
		if !r.HasErrors() || len(r.Policy) != 0 {
			t.Errorf("%q: problems %v, policy %v; want an error and no value", bad, r.Problems, r.Policy)
		}
		if !strings.Contains(strings.Join(codes(r), " "), "lease-policy") && !strings.Contains(strings.Join(codes(r), " "), "parse") {
			t.Errorf("%q: codes %v", bad, codes(r))
		}
	}
}
