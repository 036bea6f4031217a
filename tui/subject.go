package tui

import (
	"errors"
	"strings"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"steward/govern"
)

// subject is the row a dialog acts on, as it was when the dialog opened: its view, its
// identity (row.ID) and its name. The dialog's requests were built from it then and never
// follow the cursor to another row. left: a snapshot since removed it from that view — the
// dialog says so, and what it would apply is previewed again against the current state
// (replanned: this dialog's plan was read after it left).
type subject struct {
	page      pageID
	id        string
	name      string
	left      bool
	replanned bool
}

// notice is what a dialog over a subject that left says.
func (s *subject) notice() string {
	if s.replanned {
		return s.name + " left this view: this plan was previewed against the current state"
	}
	return s.name + " left this view: the action will be previewed against the current state"
}

// again is the subject of a plan read after it left.
func (s *subject) again() *subject {
	if s == nil || !s.left {
		return s
	}
	a := *s
	a.replanned = true
	return &a
}

// selectedSubject is the row selected in the view shown (nil in History or with no row).
func (s *screens) selectedSubject() *subject {
	if s.histOn {
		return nil
	}
	sel := s.list().tbl.selected()
	if sel == nil {
		return nil
	}
	return &subject{page: s.cur, id: sel.ID, name: firstNonEmpty(sel.Item, sel.Title)}
}

// acting is the subject of a key pressed now: the one of the dialog on top, else the row
// selected in the view shown.
func acting(s *stack, sc *screens) *subject {
	if e := s.topEntry(); e != nil && e.from != nil {
		return e.from
	}
	return sc.selectedSubject()
}

// subjectOf is the subject a dialog d opened now keeps: from, when d acts on the row it was
// opened for (the help, the palette and the messages act on none).
func subjectOf(d dialog, from *subject) *subject {
	switch d.(type) {
	case *actionMenu, *confirmDialog, *snoozeMenu:
		return from
	}
	return nil
}

// replanIntent asks the core for the previews of reqs again, against the current state: the
// action menu's choice, or a confirm dialog's Apply, after the row from left its view since
// their previews were read.
type replanIntent struct {
	reqs   []govern.Request
	hidden int
	names  []string
	from   *subject
}

func (replanIntent) isIntent() {}

// refill gives every tab its rows of d, then marks the subjects of the open dialogs that are
// no longer in their view and gives those dialogs the room of w × h less the notice.
func (s *stack) refill(sc *screens, d *data, w, h int) {
	sc.fill(d)
	tabs := &sc.tabs
	changed := false
	for i := range s.entries {
		f := s.entries[i].from
		if f == nil || f.left {
			continue
		}
		found := false
		for _, row := range tabs[f.page].list().tbl.rows {
			if row.ID == f.id {
				found = true
				break
			}
		}
		if !found {
			f.left, changed = true, true
		}
	}
	for _, e := range s.entries { // previews read before their row left are read again when chosen
		if e.from == nil || !e.from.left || e.from.replanned {
			continue
		}
		switch d := e.d.(type) {
		case *confirmDialog:
			d.stale = e.from
		case *actionMenu:
			d.stale = e.from
		}
	}
	if changed {
		s.setSize(w, h)
	}
}

// setSize gives every open dialog its room, w × h: less the notice above it when its subject
// left.
func (s *stack) setSize(w, h int) {
	for _, e := range s.entries {
		if e.from != nil && e.from.left {
			e.d.SetSize(w, max(h-lines(leftNotice(e.from, w)), 3))
		} else {
			e.d.SetSize(w, h)
		}
	}
}

// leftNotice draws the notice of a subject that left, wrapped to at most a dialog's width
// on a screen w wide.
func leftNotice(f *subject, w int) string {
	w = max(min(w-4, 100), 10)
	out := make([]string, 0, 2)
	for _, l := range strings.Split(wrapText("⚠ "+f.notice(), w), "\n") {
		out = append(out, st.warn.Render(l))
	}
	return strings.Join(out, "\n")
}

// view is the dialog as drawn on a screen w wide: with the notice above it, flush with its
// box, when its subject left.
func (e *stackEntry) view(w int) string {
	v := e.d.View()
	if e.from != nil && e.from.left {
		v = lipgloss.JoinVertical(lipgloss.Left, leftNotice(e.from, w), v)
	}
	return v
}

// replanCmd previews reqs again against the current state (their subject left its view
// since they were previewed) for the confirm dialog: nothing is applied from a preview of a
// row that is gone.
func replanCmd(core *govern.Core, reqs []govern.Request, hidden int, names []string, from *subject) tea.Cmd {
	return withSubject(func() tea.Msg {
		o := previewOptionsCmd(core, 0, []menuOption{{reqs: reqs}})().(previewsMsg).opts[0]
		m := previewMsg{pvs: o.previews, hidden: hidden, names: names} // no toast: asked for by no key
		if len(o.previews) == 0 && len(o.errs) > 0 {
			m.err = errors.New(o.errs[0])
		}
		return m
	}, from.again())
}

// withSubject makes the preview cmd answers keep the subject from.
func withSubject(cmd tea.Cmd, from *subject) tea.Cmd {
	return func() tea.Msg {
		m := cmd().(previewMsg)
		m.from = from
		return m
	}
}

// requests are the requests of pvs.
func requests(pvs []govern.Preview) []govern.Request {
	out := make([]govern.Request, len(pvs))
	for i, pv := range pvs {
		out[i] = pv.Request
	}
	return out
}
