package tui

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"steward/govern/actionid"
	"steward/history"
	"steward/model"
)

// manyOrphans is populated with n more orphans that have an action: as many operator rows in
// the overview's inbox.
func manyOrphans(n int) *model.Snapshot {
	s := populated()
	for i := 0; i < n; i++ {
		it := item(int64(300 + i))
		s.Orphans = append(s.Orphans, &model.Orphan{Kind: model.OrphanActiveLeasePastExpiry, Item: it, LeaseID: fmt.Sprintf("L-%d", 300+i),
			Action: &model.ActionRef{ID: actionid.ReclaimExpired, Target: model.ActionTarget{LeaseID: fmt.Sprintf("L-%d", 300+i)}, Allowed: ptr(true)}})
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

// historyRoot is a test root whose History reads ev and keeps the last-seen mark in *seen
// (mark: the one it starts with, zero for none).
func historyRoot(t *testing.T, ev *history.Evidence, mark time.Time, seen *[]time.Time) *Root {
	r := newTestRoot(t, 120, 40, false)
	r.opts.History = func(context.Context) (*history.Evidence, error) { return ev, nil }
	r.opts.LastSeen = func() (time.Time, bool, error) { return mark, !mark.IsZero(), nil }
	r.opts.SaveSeen = func(at time.Time) error { *seen = append(*seen, at); return nil }
	send(r, SnapshotMsg{populated()})
	return r
}

// History is a view like the tabs: opened at start on "since you left", left with a tab's
// key (as any view is), it keeps the last-seen mark at the time its evidence was read; with
// no mark yet it keeps a first one and closes itself; the fleet view never moves the mark.
func TestHistoryLeavesLikeAView(t *testing.T) {
	ev := heatEvidence()
	t.Run("since you left, then 2", func(t *testing.T) {
		var seen []time.Time
		r := historyRoot(t, ev, fixedNow.Add(-2*time.Hour), &seen)
		drain(r, r.openHistory(r.opts, histSince, true))
		if f := plain(r); !r.histOn || !contains(f, "Since you left") {
			t.Fatalf("since you left is not shown:\n%s", f)
		}
		send(r, keyMsg("2"))
		if r.histOn || r.cur != pageClaims || len(seen) != 1 || !seen[0].Equal(ev.Read) {
			t.Fatalf("after 2: history shown %v, view %s, marks kept %v", r.histOn, r.cur.title(), seen)
		}
	})
	t.Run("no mark yet at start", func(t *testing.T) {
		var seen []time.Time
		r := historyRoot(t, ev, time.Time{}, &seen)
		drain(r, r.openHistory(r.opts, histSince, true))
		if r.histOn || len(seen) != 1 || !seen[0].Equal(ev.Read) {
			t.Fatalf("history shown %v, marks kept %v", r.histOn, seen)
		}
	})
	t.Run("the fleet, then esc", func(t *testing.T) {
		var seen []time.Time
		r := historyRoot(t, ev, fixedNow.Add(-2*time.Hour), &seen)
		send(r, keyMsg("H"))
		if !r.histOn || !contains(plain(r), "Claims live then") {
			t.Fatalf("H did not show the fleet:\n%s", plain(r))
		}
		send(r, keyMsg("esc"))
		if r.histOn || len(seen) != 0 {
			t.Fatalf("after esc: history shown %v, marks kept %v", r.histOn, seen)
		}
	})
}

// History's keys are declared like every view's: the footer and help are drawn from them,
// the global keys work beside them, and a key that does not apply says why.
func TestHistoryKeysSayWhy(t *testing.T) {
	var seen []time.Time
	r := historyRoot(t, heatEvidence(), time.Time{}, &seen)
	r.Update(keyMsg("H")) // the evidence is not read yet: its command is not run
	send(r, keyMsg("["))
	if f := plain(r); !contains(f, "earlier: the evidence is still being read") {
		t.Fatalf("[ before the evidence:\n%s", f)
	}
	send(r, keyMsg("H"))
	send(r, keyMsg("l"))
	if f := plain(r); !contains(f, "heatmap: next item: moves between the heatmap's items") {
		t.Fatalf("l in the fleet view:\n%s", f)
	}
	if foot := lastLine(plain(r)); !contains(foot, "[ earlier") || !contains(foot, ": palette") || !contains(foot, "? help") {
		t.Fatalf("footer: %q", foot)
	}
	send(r, keyMsg("?"))
	if body := strings.Split(plain(r), "\n"); !contains(firstLines(body[headerLines:], 2), "History") {
		t.Fatalf("help does not start with History's keys:\n%s", plain(r))
	}
}
