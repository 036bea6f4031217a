package model

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"steward/leases/leaserec"
)

// TestLeaseStoreListsEachUnitOfAGroupOnce: the units of a group (one item under any remote
// name) are listed once each, in the order their first lease came, however their leases
// interleave.
func TestLeaseStoreListsEachUnitOfAGroupOnce(t *testing.T) {
	st := NewLeaseStore()
	origin := func(id string) LeaseObs { return lease(id, 7, "s1", leaserec.StatusActive, time.Hour, LivenessAlive) }
	for _, lo := range []LeaseObs{origin("L1"), origin("L2"), leaseOn("prgs", origin("L3")), origin("L4"),
		leaseOn("prgs", origin("L5"))} {
		st.Add(&lo)
	}
	it := issueItem(7)
	g := groupOf(it.key(), &it)
	prgs := it
	prgs.Remote = "prgs"
	if want := []string{it.key(), prgs.key()}; !slices.Equal(st.units[g], want) || len(st.units) != 1 {
		t.Fatalf("units %q, want group %q: %q", st.units, g, want)
	}
	if got := len(st.group(g)); got != 5 {
		t.Fatalf("group holds %d rows, want 5", got)
	}
}

// TestLeaseStorePackedReadsAnyChunkFirst: packed into two chunks, a group's rows read back
// whichever chunk is read first (here the second).
func TestLeaseStorePackedReadsAnyChunkFirst(t *testing.T) {
	st := NewLeaseStore()
	path := func(n int64) string { return fmt.Sprintf("/repo/branches/%d/", n) + strings.Repeat("x", 4<<10) }
	const items = 24 // 100 KB of worktree paths: two chunks of about 64 KB or less
	for n := int64(1); n <= items; n++ {
		lo := lease(fmt.Sprint("L", n), n, "s1", leaserec.StatusActive, time.Hour, LivenessAlive)
		lo.Lease.WorktreePath = path(n)
		st.Add(&lo)
	}
	var order []string
	for g := range st.units {
		order = append(order, g)
	}
	slices.Sort(order)
	if err := st.Pack(order); err != nil {
		t.Fatal(err)
	}
	if len(st.chunks) != 2 {
		t.Fatalf("packed into %d chunk(s), want 2", len(st.chunks))
	}
	for _, i := range []int{len(order) - 1, 0, len(order) / 2} {
		rows := st.group(order[i])
		if len(rows) != 1 || rows[0].Lease.WorktreePath != path(rows[0].Lease.WorkItemID) ||
			groupOf(leaseUnitKey(&rows[0])) != order[i] {
			t.Fatalf("group %q read back %d rows", order[i], len(rows))
		}
	}
}
