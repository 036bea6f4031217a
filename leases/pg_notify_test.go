package leases

import (
	"reflect"
	"strconv"
	"testing"
)

// TestNoticeCarriesItsChange: a transition's notice names what it changed, so a listener
// re-reads those rows only; a change too large for one notice (PostgreSQL's payload limit)
// asks for a full re-read instead.
func TestNoticeCarriesItsChange(t *testing.T) {
	t.Parallel()
	small := change{WorkItemIDs: []int64{7}, LeaseIDs: []string{"lease-1"}, SessionIDs: []string{"s1"}, EventIDs: []int64{42}}
	if got := decodeChange(small.encode()); !reflect.DeepEqual(got, small) {
		t.Errorf("a small change read back as %+v, want %+v", got, small)
	}
	var large change
	for i := range 1000 {
		large.LeaseIDs = append(large.LeaseIDs, "lease-"+strconv.Itoa(i))
	}
	if got := decodeChange(large.encode()); !got.Resync || len(got.LeaseIDs) != 0 {
		t.Errorf("a change over the payload limit read back as %d leases, resync %v; want a resync", len(got.LeaseIDs), got.Resync)
	}
}
