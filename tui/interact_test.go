package tui

import (
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"steward/govern"
	"steward/govern/actionid"
)

// TestOpenCopyClickWheel: o opens the item's address through the injected opener, y copies
// the id (a clipboard command), a click on a tab switches view, a click on a row selects it.
func TestOpenCopyClickWheel(t *testing.T) {
	r := newTestRoot(t, 160, 48, false)
	var opened string
	r.opts.OpenURL = func(u string) error { opened = u; return nil }
	send(r, SnapshotMsg{populated()}, keyMsg("2"))
	send(r, keyMsg("o"))
	if opened != "https://gitea.example/acme/widgets/issues/103" { // the first row: the expired claim

		t.Fatalf("opened %q", opened)
	}
	_, cmd := r.Update(keyMsg("y"))
	if cmd == nil || !contains(plain(r), `copied lease id "L-103"`) || !contains(r.toasts.history[len(r.toasts.history)-1].text, "OSC 52") {
		t.Fatalf("y did not say what it copied and how:\n%s", plain(r))
	}
	x := 0
	for i, id := range pageOrder {
		if id == pageOrphans {
			break
		}
		x += len([]rune(r.chrome().tabLabel(i, id, r.chrome().tabScheme())))
	}
	send(r, tea.MouseClickMsg{X: x + 2, Y: 1})
	if r.cur != pageOrphans {
		t.Fatalf("click on the Orphans tab went to %v", r.cur.title())
	}
	send(r, tea.MouseClickMsg{X: 10, Y: headerLines + 2 + 2}) // status line, column header, third row
	if got := r.list().tbl.cursor; got != 2 {
		t.Fatalf("click selected row %d, want 2", got)
	}
	send(r, tea.MouseWheelMsg{Button: tea.MouseWheelUp})
	if r.list().tbl.cursor != 0 {
		t.Fatal("wheel up did not move up")
	}
}

// TestLatePreviewDropped: previews for a menu that was closed (an older generation) are not
// applied to the dialog open now.
func TestLatePreviewDropped(t *testing.T) {
	r := newTestRoot(t, 160, 48, false)
	send(r, SnapshotMsg{populated()}, keyMsg("5"))
	_, cmd := r.Update(keyMsg("a")) // opens the menu, preview command pending
	if cmd == nil {
		t.Fatal("no preview command")
	}
	late := cmd()
	send(r, keyMsg("esc"), keyMsg("a")) // a new menu (new generation), its previews resolved
	m := r.stack.top().(*actionMenu)
	m.opts, m.loading = nil, true
	r.Update(late)
	if !m.loading || m.opts != nil {
		t.Fatal("a late preview answer was applied to a newer dialog")
	}
}

// TestUnknownOutcomeStays: an unknown outcome names its audit attempt and stays until
// dismissed, while a success expires with time.
func TestUnknownOutcomeStays(t *testing.T) {
	r := newTestRoot(t, 160, 48, false)
	send(r, SnapshotMsg{populated()})
	u := r.toasts.push(toastPending, "x", fixedNow)
	ok := r.toasts.push(toastPending, "y", fixedNow)
	send(r, applyMsg{toast: u, out: govern.Outcome{Attempt: "att-42", Action: actionid.ReclaimExpired, Result: govern.ResultUnknown}})
	send(r, applyMsg{toast: ok, out: govern.Outcome{Attempt: "att-43", Action: actionid.ReclaimExpired, Result: govern.ResultSucceeded}})
	r.opts.Now = func() time.Time { return fixedNow.Add(time.Hour) }
	r.Update(tickMsg{}) // the tick's next command is not run: it would wait a second
	if len(r.toasts.list) != 1 || !contains(plain(r), "att-42") {
		t.Fatalf("after an hour: %+v", r.toasts.list)
	}
	send(r, keyMsg("x"))
	if len(r.toasts.list) != 0 {
		t.Fatal("x did not dismiss the unknown toast")
	}
}
