package tui

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"steward/attention"
	"steward/govern"
	"steward/govern/actionid"
	"steward/model"
)

// menuOf opens the action menu on the selected row and returns its options' titles (after
// the core's previews) and closes it.
func menuOf(t *testing.T, r *Root) []string {
	t.Helper()
	send(r, keyMsg("a"))
	m, ok := r.stack.top().(*actionMenu)
	if !ok {
		t.Fatalf("a opened %T:\n%s", r.stack.top(), plain(r))
	}
	var out []string
	for _, o := range m.opts {
		out = append(out, o.action)
	}
	send(r, keyMsg("esc"))
	return out
}

// a on an inbox row offers exactly what the row's own view offers (it
// said "no action the core knows applies here"), and > goes to the row in its own view.
func TestInboxOffersTheRowsOwnActions(t *testing.T) {
	r := newTestRoot(t, 160, 48, false)
	send(r, SnapshotMsg{populated()}, keyMsg("1"))
	p := r.list()
	checked := 0
	for i := range p.tbl.view {
		p.tbl.moveTo(i)
		row := *p.tbl.selected()
		if row.Origin.key == "" || len(row.Actions) == 0 {
			continue
		}
		inbox := menuOf(t, r)
		send(r, keyMsg(">"))
		if r.cur != row.Origin.page || r.list().tbl.selected().Key != row.Origin.key {
			t.Fatalf("> from the inbox row %q went to %s row %v", row.Title, r.cur.title(), r.list().tbl.selected().Key)
		}
		own := menuOf(t, r)
		if strings.HasPrefix(row.Key, "inbox:incident:") { // a dead worker: its recover plan, then every part's own
			if !slices.Contains(inbox, actionid.Recover) {
				t.Errorf("incident row %q offers %v, not the recover plan", row.Title, inbox)
			}
			for _, a := range own {
				if !slices.Contains(inbox, a) {
					t.Errorf("incident row %q offers %v, not its part's %s", row.Title, inbox, a)
				}
			}
		} else if strings.Join(inbox, ",") != strings.Join(own, ",") || len(own) == 0 {
			t.Errorf("inbox row %q offers %v, its own view %v", row.Title, inbox, own)
		}
		send(r, keyMsg("1"))
		checked++
	}
	if checked < 2 {
		t.Fatalf("only %d inbox rows with actions checked", checked)
	}
}

// Every list is ordered by what needs attention — dead and expired
// claims first, then by time left; the inbox by severity, then age; routine rows are hidden
// with a count and h shows them; an unreadable or incomplete lock file is never routine.
func TestAttentionOrder(t *testing.T) {
	s := populated()
	s.Orphans = append(s.Orphans,
		&model.Orphan{Kind: model.OrphanUnreadableLock, LockFile: "acme_widgets_140.json", Item: item(140), InspectOnlyReason: "not JSON"},
		&model.Orphan{Kind: model.OrphanLegacyLock, LockFile: "acme_widgets_141.json", Item: item(141), InspectOnlyReason: "legacy"})
	r := newTestRoot(t, 160, 48, false)
	send(r, SnapshotMsg{s}, keyMsg("2"))
	var items []string
	for _, i := range r.list().tbl.view {
		items = append(items, r.list().tbl.rows[i].Item)
	}
	if got := strings.Join(items, " "); got != "acme/widgets#103 acme/widgets#104 acme/widgets#102 acme/widgets#101" {
		t.Errorf("claims in order %s", got)
	}
	send(r, keyMsg("1"))
	var classes, what []string
	for _, i := range r.list().tbl.view {
		row := r.list().tbl.rows[i]
		classes = append(classes, row.Class)
		what = append(what, row.Cells[3])
	}
	for i := 1; i < len(classes); i++ {
		if classes[i-1] == "operator" && classes[i] == "human-required" {
			t.Errorf("inbox order %v", classes)
		}
	}
	all := strings.Join(what, "\n")
	if !strings.Contains(all, string(model.OrphanUnreadableLock)) {
		t.Errorf("the unreadable lock is routine (hidden):\n%s", all)
	}
	if strings.Contains(all, string(model.OrphanLegacyLock)) {
		t.Errorf("the legacy lock (inspect only) is not routine")
	}
	if !contains(plain(r), "3 routine hidden (h shows them)") {
		t.Fatalf("routine count:\n%s", plain(r))
	}
	n := len(r.list().tbl.rows)
	send(r, keyMsg("h"))
	if len(r.list().tbl.rows) != n+3 || !contains(plain(r), "3 routine shown") || !contains(plain(r), string(model.OrphanLegacyLock)) {
		t.Fatalf("h: %d rows (was %d)\n%s", len(r.list().tbl.rows), n, plain(r))
	}
}

// y says exactly what it copied and that a terminal may not support
// OSC 52; o without a browser shows the address and offers to copy it; the tabs keep one
// naming scheme at every width.
func TestCopyOpenAndTabs(t *testing.T) {
	r := newTestRoot(t, 80, 24, false)
	r.opts.OpenURL = func(string) error { return errNoBrowser }
	send(r, SnapshotMsg{populated()}, keyMsg("4"), keyMsg("o"))
	f := plain(r)
	for _, want := range []string{"No browser could be opened", "https://gitea.example/acme/widgets/issues/107", "y copy the address"} {
		if !contains(f, want) {
			t.Fatalf("o without a browser does not show %q:\n%s", want, f)
		}
	}
	_, cmd := r.Update(keyMsg("y"))
	if cmd == nil || r.stack.open() {
		t.Fatal("y in the address dialog did not copy and close")
	}
	last := r.toasts.history[len(r.toasts.history)-1].text
	if !contains(last, `copied address "https://gitea.example/acme/widgets/issues/107"`) || !contains(last, "OSC 52") {
		t.Fatalf("the copy note: %q", last)
	}
	for _, w := range []int{60, 80, 100, 120, 160, 200} {
		r.Update(windowSize(w, 24))
		tabs := strings.Fields(strings.Split(plain(r), "\n")[1])
		full, short := 0, 0
		for _, id := range pageOrder {
			if id.title() == tabInfo[id].short {
				continue // a short title that is the title tells no scheme apart
			}
			for _, f := range tabs {
				switch f {
				case id.title():
					full++
				case tabInfo[id].short:
					short++
				}
			}
		}
		if full != 0 && short != 0 {
			t.Errorf("at %d columns the tabs mix names: %v", w, tabs)
		}
	}
}

// Activity shows each attempt's target (item, lease, lock file) and
// its result; heartbeats fold into a count per item (b lists them); the counts say when the
// audit log holds more than the view.
func TestActivityTargetsAndWindow(t *testing.T) {
	r := newTestRoot(t, 160, 48, false)
	send(r, SnapshotMsg{populated()})
	var atts []govern.Attempt
	at := fixedNow.Add(-time.Minute)
	add := func(action string, tgt govern.Target, res govern.Result) {
		rec := govern.Record{At: at.Format(time.RFC3339Nano), Attempt: govern.NewAttemptID(at), Action: action, Target: tgt, Actor: testActor,
			Kind: govern.KindOutcome, Result: res}
		atts = append(atts, govern.Attempt{ID: rec.Attempt, Outcome: &rec})
		at = at.Add(time.Second)
	}
	add(actionid.ReclaimExpired, govern.Target{LeaseID: "L-103"}, govern.ResultSucceeded)
	add(actionid.RetireLock, govern.Target{LockFile: "acme_widgets_106.json"}, govern.ResultRefused)
	for range 3 {
		add(actionid.Heartbeat, govern.Target{LeaseID: "L-101", Session: "sess-a1"}, govern.ResultSucceeded)
	}
	send(r, auditMsg{gen: r.agen, events: auditEvents(atts), total: 1400}, keyMsg("6"))
	f := plain(r)
	for _, want := range []string{"lease L-103", "lock acme_widgets_106.json", "succeeded", "refused", "heartbeats ×3",
		"audit: last 5 of 1,400", "heartbeat(s) folded (b)"} {
		if !contains(f, want) {
			t.Errorf("Activity does not show %q:\n%s", want, f)
		}
	}
	send(r, keyMsg("b"))
	if n := strings.Count(plain(r), actionid.Heartbeat); n != 3 {
		t.Errorf("b lists %d heartbeats, want 3", n)
	}
}

var errNoBrowser = errors.New(`exec: "xdg-open": executable file not found in $PATH`)

func windowSize(w, h int) tea.WindowSizeMsg { return tea.WindowSizeMsg{Width: w, Height: h} }

// The inbox is ordered by need, then by how far past its SLA each entry is —
// not by age. A question asked an hour ago is well within its day; a collision first seen 16
// minutes ago is past its 15 minutes, and goes first, its SLA cell saying so (ordered by age,
// the question went first).
func TestInboxOrdersByHowFarPastItsSLA(t *testing.T) {
	clk := &clock{t: fixedNow}
	c, _, _ := testCore(t, false, clk.Now)
	r := New(Options{Core: c, Now: clk.Now, Attention: AttentionOptions{SLAs: attention.DefaultSLAs}})
	r.Update(tea.WindowSizeMsg{Width: 160, Height: 48})
	snap := func() *model.Snapshot {
		s := populated()
		s.GeneratedAt = clk.Now()
		s.Clarifications[0].AskedAt = fixedNow.Add(-time.Hour)
		return s
	}
	order := func() []string {
		var out []string
		for _, x := range r.tabs[pageOverview].list().tbl.rows {
			if x.Class == "human-required" {
				out = append(out, x.Cells[1])
			}
		}
		return out
	}
	send(r, SnapshotMsg{snap()}, keyMsg("1"))
	if got := strings.Join(order(), ","); got != "contention,clarification" {
		t.Fatalf("within their SLAs the nearest deadline goes first (the collision's in 15m, the question's in 23h): %s", got)
	}
	clk.Add(16 * time.Minute)
	send(r, SnapshotMsg{snap()})
	if got := strings.Join(order(), ","); got != "contention,clarification" {
		t.Fatalf("the collision is past its SLA, the question is not: %s\n%s", got, plain(r))
	}
	if f := plain(r); !strings.Contains(f, "over 15m00s") {
		t.Fatalf("the breach is not marked:\n%s", f)
	}
}
