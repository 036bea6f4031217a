package leases

import (
	"slices"
	"testing"

	"steward/leases/leaserec"
)

// TestDegradeNeverHidesUnavailable: a section that loses part of its rows is degraded, with
// the reason — but one already unavailable stays unavailable (degraded would tell the reader
// some rows are there), and one whose status was never set counts as ok.
func TestDegradeNeverHidesUnavailable(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ from, want leaserec.HealthStatus }{
		{leaserec.HealthOK, leaserec.HealthDegraded},
		{"", leaserec.HealthDegraded},
		{leaserec.HealthDegraded, leaserec.HealthDegraded},
		{leaserec.HealthUnavailable, leaserec.HealthUnavailable},
	} {
		h := leaserec.Health{Status: c.from, Reasons: []string{"earlier"}}
		degrade(&h, "column leases.session_id is absent")
		if h.Status != c.want || !slices.Equal(h.Reasons, []string{"earlier", "column leases.session_id is absent"}) {
			t.Errorf("degrade from %q: %+v, want %q with both reasons", c.from, h, c.want)
		}
	}
}
