package lockrec

import (
	"fmt"
	"testing"
	"unsafe"
)

// TestDecodedRecordsShareRepeatedText: two lock files written by the same tool decode to
// records that hold one copy of their key lists and of the values that repeat across a
// fleet (remote, org, repo, operation, lifecycle, provenance, claimant), so that a process
// holding every record keeps each once; a caller's append to a shared key list copies it
// and leaves the other record's list as decoded (a shared list has no room past its end).
func TestDecodedRecordsShareRepeatedText(t *testing.T) {
	file := func(n int) []byte {
		return fmt.Appendf(nil, `{"remote":"origin","org":"acme","repo":"widgets","issue_number":%d,
			"branch_name":"b%d","worktree_path":"/w/%d","work_lease":{"operation_type":"author_issue_work",
			"issue_number":%d,"branch":"b%d","worktree_path":"/w/%d","claimant":{"username":"u","profile":"p"},
			"created_at":"2026-07-24T06:00:00Z","expires_at":"2026-07-24T07:00:00Z",
			"last_heartbeat_at":"2026-07-24T06:00:00Z","task_session_id":"t%d","lifecycle_version":"heartbeat-v1"},
			"lock_provenance":{"source":"gitea_lock_issue","written_by_tool":"tool"}}`, n, n, n, n, n, n, n)
	}
	a, fa := Decode(file(1))
	b, fb := Decode(file(2))
	if len(fa) > 0 || len(fb) > 0 {
		t.Fatalf("findings: %v %v", fa, fb)
	}
	same := func(what, x, y string) {
		t.Helper()
		if x != y || unsafe.StringData(x) != unsafe.StringData(y) {
			t.Errorf("%s: %q and %q are two copies", what, x, y)
		}
	}
	same("remote", a.Remote, b.Remote)
	same("org", a.Org, b.Org)
	same("repo", a.Repo, b.Repo)
	same("operation_type", a.WorkLease.OperationType, b.WorkLease.OperationType)
	same("lifecycle_version", a.WorkLease.LifecycleVersion, b.WorkLease.LifecycleVersion)
	same("claimant.username", a.WorkLease.Claimant.Username, b.WorkLease.Claimant.Username)
	same("claimant.profile", a.WorkLease.Claimant.Profile, b.WorkLease.Claimant.Profile)
	same("provenance.source", a.LockProvenance.Source, b.LockProvenance.Source)
	same("provenance.written_by_tool", a.LockProvenance.WrittenByTool, b.LockProvenance.WrittenByTool)
	if unsafe.SliceData(a.Keys) != unsafe.SliceData(b.Keys) {
		t.Error("the records' key lists are two copies")
	}
	if unsafe.SliceData(a.WorkLease.Keys) != unsafe.SliceData(b.WorkLease.Keys) {
		t.Error("the work leases' key lists are two copies")
	}
	if a.TaskSessionID() == b.TaskSessionID() {
		t.Error("the records' own values were mixed up")
	}
	if cap(a.Keys) != len(a.Keys) || cap(a.WorkLease.Keys) != len(a.WorkLease.Keys) {
		t.Error("a shared key list has room past its end: an append would write into it")
	}
}
