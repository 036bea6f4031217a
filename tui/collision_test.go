package tui

import (
	"strings"
	"testing"

	"steward/govern/actionid"
	"steward/model"
)

// collisions is a snapshot with two collisions: one whose owners are both alive (steward
// picks no winner) and one whose losing lock's owner is dead (its retire is the way out).
func collisions() *model.Snapshot {
	s := populated()
	s.Contention = []*model.Contention{
		{Kind: model.ContentionDuplicateLiveLock, Item: item(105), Sessions: []string{"sess-e5", "sess-f6"}, Owners: []string{"sess-e5", "sess-f6"},
			LockFiles: []string{"acme_widgets_105.json", "acme_widgets_105.json.2"}, Count: 2,
			Next: &model.Resolution{Who: model.ResolveWorkers, Runbook: model.RunbookOf(model.ContentionDuplicateLiveLock),
				Say: "both owners are alive (sess-e5, sess-f6): steward will not pick a winner. Whoever runs the workers stops one of them"}},
		{Kind: model.ContentionDuplicateLiveLock, Item: item(106), Sessions: []string{"sess-g7"}, Owners: []string{"sess-g7", "pid 42 (acme_widgets_106.json.2: no owner_session)"},
			LockFiles: []string{"acme_widgets_106.json", "acme_widgets_106.json.2"}, Count: 2,
			Next: &model.Resolution{Who: model.ResolveOperator, Runbook: model.RunbookOf(model.ContentionDuplicateLiveLock),
				Say:     "end the losing lock of pid 42 (its owner is dead or its claim has run out) with lock.retire; sess-g7 keeps the item",
				Actions: []model.ActionRef{{ID: actionid.RetireLock, Target: model.ActionTarget{LockFile: "acme_widgets_106.json.2"}}}}},
	}
	return s
}

// TestCollisionsHaveAWayOut: a collision's inbox row says in plain words what it is and,
// after →, its way out; a on it never answers "no action applies": it says the way out and
// offers the sanctioned action when there is one; the detail says it too, with both owners
// counted (a legacy lock's owner among them). Before, the collision was the one inbox row
// with no →, and a answered "no action applies to this row".
func TestCollisionsHaveAWayOut(t *testing.T) {
	for _, sz := range [][2]int{{80, 24}, {200, 50}} {
		r := newTestRoot(t, sz[0], sz[1], false)
		send(r, SnapshotMsg{collisions()}, keyMsg("1"))
		p := r.list()
		found := 0
		for i := range p.tbl.view {
			p.tbl.moveTo(i)
			row := *p.tbl.selected()
			if row.Origin.page != pageContention {
				continue
			}
			found++
			if !strings.Contains(row.Cells[3], "two live locks on one item") || !strings.Contains(row.Cells[3], " → ") {
				t.Errorf("%dx%d: the inbox row says %q", sz[0], sz[1], row.Cells[3])
			}
			send(r, keyMsg("a"))
			m, ok := r.stack.top().(*actionMenu)
			if !ok {
				t.Fatalf("%dx%d: a on %q opened %T:\n%s", sz[0], sz[1], row.Title, r.stack.top(), plain(r))
			}
			screen := plain(r)
			if !strings.Contains(screen, "next —") {
				t.Errorf("%dx%d: the menu does not say the way out:\n%s", sz[0], sz[1], screen)
			}
			var opts []string
			for _, o := range m.opts {
				opts = append(opts, o.action)
			}
			wantRetire := strings.Contains(row.Title, "#106")
			if got := strings.Contains(strings.Join(opts, ","), actionid.RetireLock); got != wantRetire {
				t.Errorf("%dx%d: %q offers %v", sz[0], sz[1], row.Title, opts)
			}
			send(r, keyMsg("esc"))
		}
		if found != 2 {
			t.Fatalf("%dx%d: %d collision rows in the inbox", sz[0], sz[1], found)
		}
	}
	// The Contention view's detail: the way out, the owners and the runbook.
	r := newTestRoot(t, 200, 50, false)
	send(r, SnapshotMsg{collisions()}, keyMsg("3"))
	for i := range r.list().tbl.view {
		if r.list().tbl.moveTo(i); strings.Contains(r.list().tbl.selected().Title, "#105") {
			break
		}
	}
	send(r, keyMsg("enter"))
	screen := plain(r)
	for _, want := range []string{"next — ", "steward will not pick a winner"} {
		if !strings.Contains(screen, want) {
			t.Errorf("the Contention view does not show %q:\n%s", want, screen)
		}
	}
	rows := r.list().tbl.view
	for i := range rows {
		r.list().tbl.moveTo(i)
		if row := r.list().tbl.selected(); strings.Contains(row.Title, "#106") && (row.Cells[3] != "2" || !strings.Contains(row.Cells[4], "no owner_session")) {
			t.Errorf("the collision counts %s with owners %q", row.Cells[3], row.Cells[4])
		}
	}
}
