package tui

import (
	"fmt"
	"strings"
	"testing"

	"steward/model"
)

// manyOrphans is populated with n more orphans that have an action: as many operator rows in
// the overview's inbox.
func manyOrphans(n int) *model.Snapshot {
	s := populated()
	for i := 0; i < n; i++ {
		it := item(int64(300 + i))
		s.Orphans = append(s.Orphans, &model.Orphan{Kind: model.OrphanActiveLeasePastExpiry, Item: it, LeaseID: fmt.Sprintf("L-%d", 300+i),
			Action: &model.ActionRef{ID: model.ActionReclaimExpired, Target: model.ActionTarget{LeaseID: fmt.Sprintf("L-%d", 300+i)}, Allowed: ptr(true)}})
	}
	return s
}

// The overview's head (counts, buckets, the sources' health) grows from one line to several
// when the first snapshot arrives; its table gives it the room, so the last row, selected,
// is on screen above the footer. The table was sized for the one line of "waiting for the
// first snapshot" until the window was resized, and the rows under the frame were cut off.
func TestOverviewHeadTakesItsRoom(t *testing.T) {
	for _, sz := range sizes {
		t.Run(sz.name, func(t *testing.T) {
			r := newTestRoot(t, sz.w, sz.h, false)
			send(r, SnapshotMsg{manyOrphans(60)}, keyMsg("1"), keyMsg("G"))
			f := plain(r)
			checkFrame(t, r.Render(), sz.w, sz.h)
			sel := r.list().tbl.selected()
			if sel == nil || !strings.Contains(f, "▌") || !strings.Contains(f, sel.Item) {
				t.Fatalf("the selected last row is not on screen:\n%s", f)
			}
		})
	}
}
