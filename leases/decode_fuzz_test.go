package leases

import (
	"testing"
	"time"

	"steward/leases/leaserec"
)

// FuzzDecodeLease feeds arbitrary column text to the lease row decoder and
// the freshness classifier: they must never panic, an unparseable expiry
// must be flagged and never classify as expired.
func FuzzDecodeLease(f *testing.F) {
	f.Add("active", "2026-07-23T10:10:00.000000Z", "2026-07-23T10:00:00Z", "2026-07-23T10:00:00Z", `["commit"]`, `{"source":"x"}`, "42", "1")
	f.Add("active", "not-a-date", "", "", "commit, push", "", "", "")
	f.Add("expired", "2026-07-23T12:00:00+02:00", "2026-07-23 10:00:00", "x", "[1]", "[]", "1.5", "-1")
	f.Add("", "", "", "", "", "null", "9999999999999999999999", "abc")
	f.Fuzz(func(t *testing.T, status, exp, created, hb, allowed, prov, pid, count string) {
		cols := map[string]string{"lease_id": "l", "status": status, "expires_at": exp, "created_at": created,
			"last_heartbeat_at": hb, "allowed_actions": allowed, "provenance_json": prov, "owner_pid": pid,
			"heartbeat_count": count}
		l := decodeLease(func(c string) (string, bool) { v, ok := cols[c]; return v, ok })
		if l.ExpiresAt.Raw != exp {
			t.Fatalf("raw expiry not kept: %q", l.ExpiresAt.Raw)
		}
		now := time.Date(2026, 7, 23, 10, 5, 0, 0, time.UTC)
		r := leaserec.Classify(l, leaserec.DefaultPolicy(leaserec.ClassAuthorIssueWork), leaserec.Evidence{}, now)
		if l.Status == leaserec.StatusActive && !l.ExpiresAt.OK() && r.Value == leaserec.FreshExpired {
			t.Fatalf("unrecorded expiry %q classified expired", exp)
		}
		if !r.NextDeadline.IsZero() && !r.NextDeadline.After(now) {
			t.Fatalf("deadline %v not after now", r.NextDeadline)
		}
		e := decodeEvent(func(c string) (string, bool) {
			switch c {
			case "detail_json":
				return prov, true
			case "created_at":
				return created, true
			}
			return "", false
		})
		if e.DetailRaw != prov {
			t.Fatal("detail raw not kept")
		}
	})
}
