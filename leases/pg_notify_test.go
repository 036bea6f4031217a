package leases

import (
	"reflect"
	"strconv"
	"strings"
	"testing"

	"steward/leases/leaserec"
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
	// At the limit exactly the change is sent as itself; a byte more and it is a resync.
	atLimit := change{LeaseIDs: []string{strings.Repeat("x", maxNotifyPayload-len(`{"l":[""]}`))}}
	if got := decodeChange(atLimit.encode()); !reflect.DeepEqual(got, atLimit) {
		t.Errorf("a change of exactly %d bytes read back as resync %v", maxNotifyPayload, got.Resync)
	}
	over := change{LeaseIDs: []string{atLimit.LeaseIDs[0] + "x"}}
	if got := decodeChange(over.encode()); !got.Resync {
		t.Errorf("a change of %d bytes read back as itself, want a resync", maxNotifyPayload+1)
	}
	var large change
	for i := range 1000 {
		large.LeaseIDs = append(large.LeaseIDs, "lease-"+strconv.Itoa(i))
	}
	if got := decodeChange(large.encode()); !got.Resync || len(got.LeaseIDs) != 0 {
		t.Errorf("a change over the payload limit read back as %d leases, resync %v; want a resync", len(got.LeaseIDs), got.Resync)
	}
}

// TestNoticeNamesTheLeasesItChanged: a notice lists each changed lease's item, id and holder
// once; a lease recorded without an item id adds none (an id ≤ 0 would make every listener
// re-read everything), and no lease adds nothing.
func TestNoticeNamesTheLeasesItChanged(t *testing.T) {
	t.Parallel()
	var c change
	c.add(nil)
	c.add(&leaserec.Lease{WorkItemID: 7, LeaseID: "lease-1", SessionID: "s1"})
	c.add(&leaserec.Lease{WorkItemID: 7, LeaseID: "lease-1", SessionID: "s1"})
	c.add(&leaserec.Lease{LeaseID: "lease-2", SessionID: "s2"})
	want := change{WorkItemIDs: []int64{7}, LeaseIDs: []string{"lease-1", "lease-2"}, SessionIDs: []string{"s1", "s2"}}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("change %+v, want %+v", c, want)
	}
	if got := decodeChange(c.encode()); got.Resync {
		t.Errorf("the notice read back as a resync")
	}
}

// TestNoticeWithABadItemIsAResync: a notice naming an item id that no row can have (0 or
// negative: another writer's, or a damaged payload) is read as a full re-read, never as a
// scoped one that would look for that item and miss what changed.
func TestNoticeWithABadItemIsAResync(t *testing.T) {
	t.Parallel()
	for _, p := range []string{`{"w":[0]}`, `{"w":[7,-1]}`, `{"w":[7,0]}`} {
		if got := decodeChange(p); !got.Resync || len(got.WorkItemIDs) != 0 {
			t.Errorf("payload %s read as %+v, want a resync", p, got)
		}
	}
	if got := decodeChange(`{"w":[1]}`); got.Resync || !reflect.DeepEqual(got.WorkItemIDs, []int64{1}) {
		t.Errorf("payload naming item 1 read as %+v, want item 1", got)
	}
}
