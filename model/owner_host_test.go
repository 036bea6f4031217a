package model

import (
	"testing"

	"steward/leases/leaserec"
)

// TestOwnerOnAnotherHost: a claim whose owner was observed on another host names that
// host and reads "unknown, other host (NAME)"; one on this host reads its liveness alone.
func TestOwnerOnAnotherHost(t *testing.T) {
	for _, tc := range []struct {
		obs       LeaseObs
		otherHost string
		shown     string
	}{
		{LeaseObs{Host: "host-a", OtherHost: true, Owner: LivenessUnknown}, "host-a", "unknown, other host (host-a)"},
		{LeaseObs{Host: "host-b", Owner: LivenessDead}, "", "dead"},
		{LeaseObs{Host: "host-b", Owner: LivenessUnknown}, "", "unknown"},
	} {
		tc.obs.Lease = leaserec.Lease{LeaseID: "L1", Status: leaserec.StatusActive, OwnerPID: 4242, OwnerHost: tc.obs.Host}
		c := leaseClaim(nil, &tc.obs, leaserec.FreshnessResult{Value: leaserec.FreshActive}, leaserec.Policy{}, "", 0)
		if c.OwnerOtherHost != tc.otherHost || c.OwnerText() != tc.shown {
			t.Errorf("%+v: other host %q, shown %q; want %q, %q", tc.obs, c.OwnerOtherHost, c.OwnerText(), tc.otherHost, tc.shown)
		}
	}
}
