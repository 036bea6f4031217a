package locks

import (
	"testing"

	"steward/locks/lockrec"
)

// FuzzNameRoundTrip: every key Name accepts parses back from its name to the same key,
// and the name is one ValidName accepts (the decoder's fuzz used to check this only for
// the keys of records it could decode).
func FuzzNameRoundTrip(f *testing.F) {
	f.Add("prgs", "o", "r", int64(7))
	f.Add("origin", "ac_me", "wid__gets", int64(0))
	f.Add("", ".hidden", "ünï/cødé", int64(1<<62))
	f.Add("a%2E", "..", "x\x00y", int64(-1))
	f.Fuzz(func(t *testing.T, remote, org, repo string, issue int64) {
		k := lockrec.Key{Remote: remote, Org: org, Repo: repo, Issue: issue}
		n, ok := Name(k)
		if !ok {
			return
		}
		if back, ok := parseName(n); !ok || back != k {
			t.Fatalf("name %q does not parse back to %+v (got %+v, %v)", n, k, back, ok)
		}
		if !ValidName(n) {
			t.Fatalf("name %q is not a valid lock file name", n)
		}
	})
}
