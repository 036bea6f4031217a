package lockrec

import "strings"

// joinPath renders a field path: keys joined by '.', indices appended.
func joinPath(prefix []string, last string) string {
	var b strings.Builder
	for _, s := range prefix {
		if b.Len() > 0 && !strings.HasPrefix(s, "[") {
			b.WriteByte('.')
		}
		b.WriteString(s)
	}
	if b.Len() > 0 && !strings.HasPrefix(last, "[") {
		b.WriteByte('.')
	}
	b.WriteString(last)
	return b.String()
}

// seen reports whether key already occurred in the object being parsed:
// a linear scan for small objects, a set once the object grows.
func (p *parser) seen(obj []jmember, set *map[string]struct{}, key string) bool {
	const small = 16
	if len(obj) < small {
		for _, m := range obj {
			if m.key == key {
				return true
			}
		}
		return false
	}
	if *set == nil {
		*set = make(map[string]struct{}, 2*small)
		for _, m := range obj {
			(*set)[m.key] = struct{}{}
		}
	}
	_, dup := (*set)[key]
	(*set)[key] = struct{}{}
	return dup
}

// intern returns the lock schema's key names without allocating (the
// compiler does not allocate for a switch on string(b)).
func intern(b []byte) string {
	switch string(b) {
	case "remote", "org", "repo", "issue_number", "branch", "branch_name", "worktree_path",
		"work_lease", "lock_provenance", "owner_session", "assignment_id", "lease_id",
		"expected_base_sha", "lock_generation", "claimant", "pid", "session_pid",
		"operation_type", "pr_number", "created_at", "expires_at", "last_heartbeat_at",
		"heartbeat_count", "task_session_id", "lifecycle_version", "username", "profile",
		"source", "written_by_tool", "bootstrap_lock_recovery", "lease_renewal", "steward_recovery":
		for _, k := range internKeys {
			if k == string(b) {
				return k
			}
		}
	}
	return string(b)
}

var internKeys = []string{"remote", "org", "repo", "issue_number", "branch", "branch_name", "worktree_path",
	"work_lease", "lock_provenance", "owner_session", "assignment_id", "lease_id",
	"expected_base_sha", "lock_generation", "claimant", "pid", "session_pid",
	"operation_type", "pr_number", "created_at", "expires_at", "last_heartbeat_at",
	"heartbeat_count", "task_session_id", "lifecycle_version", "username", "profile",
	"source", "written_by_tool", "bootstrap_lock_recovery", "lease_renewal", "steward_recovery"}
