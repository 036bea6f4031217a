package tui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"
)

// Help could only be scrolled ten lines at a time, and typing did nothing. Now what is
// typed filters it (lazygit's '?'): "mark" leaves the keys that mark, q types instead
// of closing, esc clears the filter and then closes; pgdn and pgup move a whole screen,
// and the footer says so.
func TestFlowHelpFiltersAndPages(t *testing.T) {
	tm := startFixtureFlow(t, 80, 24, populated())
	pressAll(tm, "2")
	waitText(t, tm, "acme/widgets#103")
	pressAll(tm, "?")
	waitText(t, tm, "Help — this view's keys first", "pgdn page down", "pgup page up")
	for _, m := range typeText("mark") {
		tm.Send(m)
	}
	waitText(t, tm, "Help — filter: mark", "mark all shown")
	tm.Send(tea.QuitMsg{})
	r := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(*Root)
	f := plain(r)
	for _, gone := range []string{"first row", "copy id", "Claims: Rows"} {
		if strings.Contains(f, gone) {
			t.Errorf("the filter \"mark\" still shows %q:\n%s", gone, f)
		}
	}
}

// The same, driven key by key on the model: q types, esc clears then closes, and a page is
// the screen's height.
func TestHelpFilterAndPageKeys(t *testing.T) {
	r := newTestRoot(t, 80, 24, false)
	send(r, SnapshotMsg{populated()}, keyMsg("2"), keyMsg("?"))
	hv, ok := r.stack.top().(*helpView)
	if !ok {
		t.Fatalf("? opened %T", r.stack.top())
	}
	_ = plain(r) // a frame is drawn before any key
	send(r, keyMsg("pgdown"))
	_ = plain(r)
	if got, want := hv.scroll.offset(), hv.page(); got != want || want < 15 {
		t.Fatalf("pgdn moved help %d lines, want a screen (%d)", got, want)
	}
	send(r, keyMsg("pgup"))
	if hv.scroll.offset() != 0 {
		t.Fatalf("pgup left help at %d", hv.scroll.offset())
	}
	send(r, typeText("quit")...)
	if r.stack.top() != hv {
		t.Fatal("q closed help instead of typing")
	}
	if f := plain(r); !strings.Contains(f, "filter: quit") || !strings.Contains(f, "q") || strings.Contains(f, "first row") {
		t.Fatalf("the filter \"quit\":\n%s", f)
	}
	send(r, typeText("zzzz")...)
	if f := plain(r); !strings.Contains(f, "no key matches") {
		t.Fatalf("a filter that matches nothing says nothing:\n%s", f)
	}
	send(r, keyMsg("esc"))
	if r.stack.top() != hv || hv.filter.String() != "" {
		t.Fatalf("esc with a filter: top %T, filter %q", r.stack.top(), hv.filter.String())
	}
	send(r, keyMsg("esc"))
	if r.stack.open() {
		t.Fatal("esc on an empty filter did not close help")
	}
}
