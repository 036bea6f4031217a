package locks

import (
	"testing"

	"steward/locks/lockrec"
)

// TestDecodeOutOfRange: integers no writer means are kept as written and reported, so a
// lock on issue -5 or with pid 2^40 is never taken at face value silently.
func TestDecodeOutOfRange(t *testing.T) {
	cases := map[string]string{
		`{"issue_number": -5}`:                    "issue_number",
		`{"issue_number": 0}`:                     "issue_number",
		`{"lock_generation": -1}`:                 "lock_generation",
		`{"pid": 1099511627776}`:                  "pid",
		`{"session_pid": 0}`:                      "session_pid",
		`{"work_lease": {"pr_number": -2}}`:       "work_lease.pr_number",
		`{"work_lease": {"heartbeat_count": -1}}`: "work_lease.heartbeat_count",
		`{"work_lease": {"issue_number": -9}}`:    "work_lease.issue_number",
	}
	for in, path := range cases {
		rec, fs := lockrec.Decode([]byte(in))
		found := false
		for _, f := range fs {
			if f.Kind == lockrec.FindingOutOfRange && f.Path == path {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: no out-of-range finding at %s: %+v", in, path, fs)
		}
		if len(rec.Keys) == 0 {
			t.Errorf("%s: record dropped", in)
		}
	}
	if _, fs := lockrec.Decode([]byte(`{"issue_number": 7, "pid": 42, "lock_generation": 0}`)); hasKind(fs, lockrec.FindingOutOfRange) {
		t.Errorf("in-range values reported: %+v", fs)
	}
}

func hasKind(fs []lockrec.Finding, k lockrec.FindingKind) bool {
	for _, f := range fs {
		if f.Kind == k {
			return true
		}
	}
	return false
}
