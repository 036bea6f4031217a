package lockrec

import (
	"slices"
	"testing"
	"time"
)

// A lock that lacks no canonical field gives no "missing canonical fields" reason: the
// reasons name only what is wrong with it (assess.go:171).
func TestAssessNamesNoMissingFieldsWhenNoneAreMissing(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 7, 24, 6, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name    string
		expires string
		reasons []string
	}{
		{"canonical", "2026-07-24T06:10:00Z", []string{}},
		{"canonical and expired", "2026-07-24T05:00:00Z", []string{}},
		{"unparseable expiry", "soon", []string{"unparseable expires_at 'soon'"}},
	} {
		r := canonicalRecord(c.expires)
		a := Assess(&r, now)
		if len(a.MissingFields) != 0 || !slices.Equal(a.Reasons, c.reasons) {
			t.Errorf("%s: missing %q, reasons %q; want none missing and reasons %q",
				c.name, a.MissingFields, a.Reasons, c.reasons)
		}
	}
}
