package lockrec

import (
	"bytes"
	"testing"
)

// TestDetachKeepsWhatWasDecoded: after Detach the record holds no byte of the file it was
// decoded from — the file's bytes overwritten, it still encodes to the same document — and
// every raw field (extras at every level, the raw blocks) survives.
func TestDetachKeepsWhatWasDecoded(t *testing.T) {
	t.Parallel()
	doc := []byte(`{"remote":"origin","org":"acme","repo":"widgets","issue_number":7,"branch_name":"b","worktree_path":"/w",` +
		`"work_lease":{"operation_type":"author_issue_work","issue_number":7,"branch":"b","worktree_path":"/w",` +
		`"claimant":{"username":"u","profile":"p","cx":[1,2]},"created_at":"2026-07-24T06:00:00Z","expires_at":"2026-07-24T07:00:00Z",` +
		`"last_heartbeat_at":"2026-07-24T06:00:00Z","task_session_id":"t","lifecycle_version":"heartbeat-v1","wx":{"a":1}},` +
		`"lock_provenance":{"source":"s","written_by_tool":"w","claimant":{"username":"u","profile":"p","px":true},"pvx":"v"},` +
		`"claimant":{"username":"u","profile":"p","lx":null},"host":"h","lease_renewal":{"r":1},"bootstrap_lock_recovery":{"b":2},` +
		`"steward_recovery":{"action":"lock.retire"},"pid":"not a number"}`)
	rec, findings := Decode(doc)
	for _, f := range findings {
		if f.Fatal() {
			t.Fatalf("fixture: %+v", f)
		}
	}
	want, err := Marshal(&rec)
	if err != nil {
		t.Fatal(err)
	}
	raw := rec.Raw
	rec.Detach()
	if rec.Raw != nil {
		t.Fatal("Raw kept")
	}
	for i := range raw {
		raw[i] = '#'
	}
	got, err := Marshal(&rec)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("after Detach and the file's bytes overwritten:\n got %s\nwant %s", got, want)
	}
	if len(rec.Extra) < 2 || len(rec.WorkLease.Extra) != 1 || len(rec.WorkLease.Claimant.Extra) != 1 ||
		len(rec.LockProvenance.Extra) != 1 || len(rec.LockProvenance.Claimant.Extra) != 1 || len(rec.Claimant.Extra) != 1 {
		t.Fatalf("extras lost: %+v", rec)
	}
	rec.Detach() // twice is harmless
	var empty Record
	empty.Detach()
}
