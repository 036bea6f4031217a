package tui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"steward/model"
)

// startFixtureFlow runs the workbench as a program on a w×h terminal over the fixture's
// snapshot, with a real core.
func startFixtureFlow(t *testing.T, w, h int, snap *model.Snapshot) *teatest.TestModel {
	t.Helper()
	c, _, _ := testCore(t, false, func() time.Time { return fixedNow })
	src := &diskSource{now: func() time.Time { return fixedNow }, ch: make(chan *model.Snapshot, 1)}
	tm := startFlowAt(t, Options{Core: c, Now: func() time.Time { return fixedNow }}, src, w, h)
	tm.Send(SnapshotMsg{Snapshot: snap})
	return tm
}

// The answer editor's submit key was in the footer only, which drops a disabled key: an
// empty editor at 80×24 never said how to send. Now the editor's last line names it at
// every size, empty or not, with why it waits.
func TestFlowEditorShowsItsSubmitKey(t *testing.T) {
	for _, sz := range decideSizes {
		t.Run(sz.name, func(t *testing.T) {
			tm := startFixtureFlow(t, sz.w, sz.h, populated())
			pressAll(tm, "4")
			waitText(t, tm, "Which config")
			pressAll(tm, "a", "enter")
			waitText(t, tm, "Your answer (Markdown)", "ctrl+s ask the core to preview the answer (write the answer first)")
			for _, m := range typeText("Use YAML.") {
				tm.Send(m)
			}
			waitText(t, tm, "Use YAML.", "ctrl+s ask the core to preview the answer · ctrl+p preview · esc close")
			tm.Send(tea.QuitMsg{})
			tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second))
		})
	}
}

// "asking the core for the recover plan of …" stayed up as a note after the plan was on
// screen, beside the plan it announced. Now the progress toast is replaced in place by
// what came of it: one message, no "asking" left.
func TestFlowProgressToastReplacedByResult(t *testing.T) {
	tm := startFixtureFlow(t, 80, 24, populated())
	pressAll(tm, "5")
	waitText(t, tm, "acme/widgets#106")
	pressAll(tm, "j", "c")
	waitText(t, tm, "item.recover", "previewed item.recover on item acme/widgets#106")
	tm.Send(tea.QuitMsg{})
	r := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(*Root)
	if f := plain(r); strings.Contains(f, "asking the core") {
		t.Fatalf("the progress toast is still up beside its result:\n%s", f)
	}
	n := 0
	for _, x := range r.toasts.history {
		if strings.Contains(x.text, "acme/widgets#106") {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d messages about the plan, want the one replaced in place: %+v", n, r.toasts.history)
	}
}
