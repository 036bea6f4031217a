package lockrec

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func hasFinding(fs []Finding, kind FindingKind, path string) bool {
	for _, f := range fs {
		if f.Kind == kind && f.Path == path {
			return true
		}
	}
	return false
}

func TestDecodeMalformed(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		in   string
		kind FindingKind
		path string
	}{
		{"empty", "", FindingEmpty, ""},
		{"whitespace", " \n\t", FindingEmpty, ""},
		{"nul", "{\"a\":\"\x00\"}", FindingNUL, ""},
		{"invalid utf8", "{\"a\":\"\xff\"}", FindingInvalidUTF8, ""},
		{"truncated object", `{"remote": "prgs", "org"`, FindingTruncated, ""},
		{"truncated string", `{"remote": "pr`, FindingTruncated, ""},
		{"truncated escape", `{"remote": "pr\u00`, FindingTruncated, ""},
		{"syntax", `{"remote": prgs}`, FindingSyntax, ""},
		{"trailing data", `{} {}`, FindingSyntax, ""},
		{"trailing comma", `{"a":1,}`, FindingSyntax, ""},
		{"leading zero", `{"a":01}`, FindingSyntax, ""},
		{"bad escape", `{"a":"\q"}`, FindingSyntax, ""},
		{"raw control char", "{\"a\":\"x\ty\"}", FindingSyntax, ""},
		{"too deep", strings.Repeat("[", 100) + strings.Repeat("]", 100), FindingSyntax, ""},
		{"array top level", `[1]`, FindingNotObject, ""},
		{"string top level", `"lock"`, FindingNotObject, ""},
		{"null top level", `null`, FindingNotObject, ""},
		{"duplicate top key", `{"org":"a","org":"b"}`, findingDuplicateKey, "org"},
		{"duplicate nested key", `{"work_lease":{"claimant":{"profile":"a","profile":"b"}}}`, findingDuplicateKey, "work_lease.claimant.profile"},
		{"duplicate in array", `{"x":[{"k":1},{"k":1,"k":2}]}`, findingDuplicateKey, "x[1].k"},
		{"issue as string", `{"issue_number":"5"}`, findingWrongType, "issue_number"},
		{"issue as float", `{"issue_number":5.5}`, findingWrongType, "issue_number"},
		{"issue overflow", `{"issue_number":99999999999999999999}`, findingWrongType, "issue_number"},
		{"remote as number", `{"remote":7}`, findingWrongType, "remote"},
		{"work_lease as string", `{"work_lease":"x"}`, FindingNotObject, "work_lease"},
		{"claimant as array", `{"claimant":[]}`, FindingNotObject, "claimant"},
		{"username as bool", `{"work_lease":{"claimant":{"username":true}}}`, findingWrongType, "work_lease.claimant.username"},
		{"expires_at as number", `{"work_lease":{"expires_at":5}}`, findingWrongType, "work_lease.expires_at"},
		{"bad timestamp", `{"work_lease":{"created_at":"yesterday"}}`, findingBadTimestamp, "work_lease.created_at"},
		{"non utc timestamp", `{"work_lease":{"created_at":"2026-07-24T08:00:00+02:00"}}`, findingNonUTCTimestamp, "work_lease.created_at"},
		{"missing required", `{"org":"a"}`, FindingMissing, "remote"},
		{"missing lease field", `{"work_lease":{}}`, FindingMissing, "work_lease.expires_at"},
		{"renewal not object", `{"lease_renewal":1}`, FindingNotObject, "lease_renewal"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, fs := Decode([]byte(c.in))
			if !hasFinding(fs, c.kind, c.path) {
				t.Errorf("findings %+v lack %s at %q", fs, c.kind, c.path)
			}
		})
	}
}

func TestDecodeValues(t *testing.T) {
	t.Parallel()
	rec, fs := Decode([]byte(`{"remote":"a\u00e9\ud83d\ude00\n","issue_number":-3,"work_lease":{"expires_at":" 2026-07-24T06:00:00Z ","pr_number":null}, "lease_id": null}`))
	if len(fs) == 0 || hasFinding(fs, FindingSyntax, "") {
		t.Fatalf("findings: %+v", fs)
	}
	if rec.Remote != "aé😀\n" || rec.IssueNumber == nil || *rec.IssueNumber != -3 {
		t.Errorf("got remote %q issue %v", rec.Remote, rec.IssueNumber)
	}
	if !rec.WorkLease.ExpiresAt.Valid || rec.WorkLease.ExpiresAt.Text != " 2026-07-24T06:00:00Z " {
		t.Errorf("expires_at = %+v", rec.WorkLease.ExpiresAt)
	}
	if hasFinding(fs, findingWrongType, "lease_id") || hasFinding(fs, findingWrongType, "work_lease.pr_number") {
		t.Errorf("null reported as wrong type: %+v", fs)
	}
	// Duplicate keys: the last value wins.
	rec, _ = Decode([]byte(`{"issue_number":1,"issue_number":2}`))
	if *rec.IssueNumber != 2 {
		t.Errorf("duplicate: issue %d, want the last (2)", *rec.IssueNumber)
	}
	// Lone surrogates decode to U+FFFD instead of failing.
	rec, fs = Decode([]byte(`{"remote":"\ud800x"}`))
	if rec.Remote != "\uFFFDx" || hasFinding(fs, FindingSyntax, "") {
		t.Errorf("lone surrogate: %q %+v", rec.Remote, fs)
	}
}

func TestDecodeKeepsUnknownAndRoundTrips(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join(fixtureDir, "unknown-fields.json"))
	if err != nil {
		t.Fatal(err)
	}
	rec, _ := Decode(data)
	if len(rec.UnknownKeys) != 1 || rec.UnknownKeys[0] != "x_scheduler_hint" {
		t.Fatalf("unknown keys %v", rec.UnknownKeys)
	}
	out, err := Marshal(&rec)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"x_scheduler_hint"`, `"tags"`, `"x_worker_note": "kept"`, `"x_signed": true`} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("rewrite lost %s:\n%s", want, out)
		}
	}
	again, fs := Decode(out)
	if hasFinding(fs, findingDuplicateKey, "") || len(fs) != 0 {
		t.Errorf("re-decode findings: %+v", fs)
	}
	out2, _ := Marshal(&again)
	if !bytes.Equal(out, out2) {
		t.Errorf("marshal not stable:\n%s\n---\n%s", out, out2)
	}
}

func TestMarshalKeepsWrongTypedFields(t *testing.T) {
	t.Parallel()
	rec, _ := Decode([]byte(`{"issue_number":"12","work_lease":{"expires_at":5,"claimant":{"username":7}},"lock_provenance":{"source":false}}`))
	out, err := Marshal(&rec)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"issue_number": "12"`, `"expires_at": 5`, `"username": 7`, `"source": false`} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("rewrite lost %s:\n%s", want, out)
		}
	}
	if _, fs := Decode(out); hasFinding(fs, findingDuplicateKey, "work_lease.claimant.username") || hasFinding(fs, findingDuplicateKey, "lock_provenance.source") {
		t.Errorf("rewrite duplicated a key: %+v", fs)
	}
}

func TestRecoveryBlocks(t *testing.T) {
	t.Parallel()
	rec, _ := Decode(fixtureBytes(t, "recovered-blocks.json"))
	b, ok := rec.BootstrapRecovery()
	if !ok || b.RecoveryKind != "incomplete_bootstrap_lock" || b.PriorGeneration == nil || *b.PriorGeneration != 2 {
		t.Errorf("bootstrap_lock_recovery = %+v %v", b, ok)
	}
	r, ok := rec.Renewal()
	if !ok || !r.Renewed || r.PRNumber == nil || *r.PRNumber != 701 {
		t.Errorf("lease_renewal = %+v %v", r, ok)
	}
	if _, ok := rec.Recovery(); ok {
		t.Error("steward_recovery reported present")
	}
}
