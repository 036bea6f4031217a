package tui

import (
	"context"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"steward/history"
)

// HistoryKeys drive the History view: the time cursor, its modes and the heatmap.
type HistoryKeys struct {
	Earlier, Later, Finer, Coarser, Now key.Binding
	Mode, Window                        key.Binding
	Up, Down, Left, Right, Open, Back   key.Binding
}

func defaultHistoryKeys(b func([]string, string, string) key.Binding) HistoryKeys {
	return HistoryKeys{
		Earlier: b([]string{"["}, "[", "earlier"),
		Later:   b([]string{"]"}, "]", "later"),
		Finer:   b([]string{"-"}, "-", "smaller step"),
		Coarser: b([]string{"+", "="}, "+", "larger step"),
		Now:     b([]string{"n"}, "n", "cursor to now"),
		Mode:    b([]string{"m"}, "m", "fleet/heatmap/since"),
		Window:  b([]string{"w"}, "w", "heatmap window"),
		Up:      b([]string{"k", "up"}, "k/↑", "up"),
		Down:    b([]string{"j", "down"}, "j/↓", "down"),
		Left:    b([]string{"h", "left"}, "h/←", "heatmap: previous item"),
		Right:   b([]string{"l", "right"}, "l/→", "heatmap: next item"),
		Open:    b([]string{"enter"}, "enter", "open its timeline"),
		Back:    b([]string{"esc"}, "esc", "back/close"),
	}
}

// histMode is what the History view shows.
type histMode int

const (
	histFleet histMode = iota // the fleet at the cursor
	histHeat                  // the contention heatmap of the window ending at the cursor
	histSince                 // since you left
)

var histModeNames = []string{"Fleet at cursor", "Heatmap", "Since you left"}

var (
	histSteps   = []time.Duration{time.Minute, 5 * time.Minute, 15 * time.Minute, time.Hour, 6 * time.Hour}
	histWindows = []time.Duration{15 * time.Minute, time.Hour, 6 * time.Hour, 24 * time.Hour}
)

// historyView is the History view (H, L): the fleet reconstructed at a time cursor, the
// contention heatmap and "since you left", over evidence gathered in a command. It is a
// view like the tabs — its keys declared, shown in the footer and help, the global keys
// beside them — and it is read-only: no key of it acts on a source. Leaving it after "since
// you left" was shown moves the last-seen mark to when its evidence was read.
type historyView struct {
	keys    HistoryKeys
	w, h    int
	ev      *history.Evidence
	loading bool
	err     string
	mode    histMode
	cursor  time.Time
	step    int
	window  int
	mark    time.Time
	hasMark bool
	// heat selection and scroll; line selection of the since list
	hs, hi, sel, scroll int
	// tl is the open timeline (a heat cell's, or a since line's item), nil when none.
	tl     *history.Timeline
	tlName string
	// sawSince is set once "since you left" was drawn: leaving then moves the mark.
	sawSince bool
	// gen is the generation of the evidence read (a late answer is dropped); sinceOnStart:
	// it was opened at start on "since you left"; saveSeen keeps the last-seen mark.
	gen          int
	sinceOnStart bool
	saveSeen     func(time.Time) error
}

var _ page = (*historyView)(nil)

func newHistoryView(keys HistoryKeys) *historyView {
	return &historyView{keys: keys, step: 1, window: 1}
}

// open starts the view in a mode and the read of its evidence (IO, in a command).
func (h *historyView) open(opts Options, mode histMode, atStart bool) tea.Cmd {
	*h = historyView{keys: h.keys, w: h.w, h: h.h, step: 1, window: 1, loading: true, mode: mode, gen: h.gen + 1,
		sinceOnStart: atStart, saveSeen: opts.SaveSeen}
	return histCmd(opts.History, opts.LastSeen, h.gen)
}

// loaded installs the evidence read in a command (a late answer is dropped); the cursor
// starts at the time it was read. stay is false when the view closes itself: opened at
// start on a workspace with no last-seen mark yet, it has nothing to compare with, keeps a
// first mark and closes.
func (h *historyView) loaded(m histMsg) (cmd tea.Cmd, stay bool) {
	if m.gen != h.gen || !h.loading {
		return nil, true
	}
	h.loading = false
	if m.err != nil {
		h.err = m.err.Error()
		return nil, true
	}
	h.ev, h.mark, h.hasMark = m.ev, m.mark, m.hasMark
	if h.cursor.IsZero() || h.cursor.After(m.ev.Read) {
		h.cursor = m.ev.Read
	}
	if h.mode == histSince && !m.hasMark && h.sinceOnStart {
		return h.leave(), false
	}
	return nil, true
}

// leave is the view closing: after "since you left" was shown (or at a first start), the
// last-seen mark moves to when the evidence was read. The evidence is let go.
func (h *historyView) leave() tea.Cmd {
	var cmd tea.Cmd
	if h.ev != nil && (h.sawSince || h.sinceOnStart && !h.hasMark) {
		cmd = saveSeenCmd(h.saveSeen, h.ev.Read)
	}
	h.ev, h.tl, h.loading, h.sinceOnStart = nil, nil, false, false
	h.gen++ // a read still running is for a view that closed
	return cmd
}

// bindings are the History keys as they apply now: the timeline's while one is open.
func (h *historyView) bindings() bindings {
	k := h.keys
	const grp = "History"
	if h.tl != nil {
		return bindings{
			bind(k.Down, grp, true, nil, func() intent { h.scroll++; return nil }),
			bind(k.Up, grp, true, nil, func() intent { h.scroll = max(h.scroll-1, 0); return nil }),
			bind(k.Back, grp, true, nil, func() intent { h.tl, h.scroll = nil, 0; return nil }),
		}
	}
	read := onlyIf(func() bool { return h.ev != nil }, h.unread())
	heat := onlyIf(
		func() bool { return h.ev != nil && h.mode == histHeat },
		"moves between the heatmap's items (m shows the heatmap)",
	)
	do := func(f func()) func() intent { return func() intent { f(); return nil } }
	return bindings{
		bind(k.Earlier, grp, true, read, do(func() { h.cursor = h.cursor.Add(-histSteps[h.step]) })),
		bind(k.Later, grp, true, read, do(func() {
			h.cursor = h.cursor.Add(histSteps[h.step])
			if h.cursor.After(h.ev.Read) {
				h.cursor = h.ev.Read
			}
		})),
		bind(k.Mode, grp, true, read, do(func() { h.mode = (h.mode + 1) % 3; h.sel, h.scroll = 0, 0 })),
		bind(k.Open, grp, true, read, do(h.openTimeline)),
		bind(k.Back, grp, true, nil, func() intent { return backIntent{} }),
		bind(k.Finer, grp, true, read, do(func() { h.step = max(h.step-1, 0) })),
		bind(k.Coarser, grp, true, read, do(func() { h.step = min(h.step+1, len(histSteps)-1) })),
		bind(k.Window, grp, true, read, do(func() { h.window = (h.window + 1) % len(histWindows) })),
		bind(k.Now, grp, false, read, do(func() { h.cursor = h.ev.Read })),
		bind(k.Up, grp, false, read, do(func() { h.move(-1) })),
		bind(k.Down, grp, false, read, do(func() { h.move(1) })),
		bind(k.Left, grp, false, heat, do(func() { h.hi = max(h.hi-1, 0) })),
		bind(k.Right, grp, false, heat, do(func() { h.hi++ })),
	}
}

// unread is why the keys that need the evidence do nothing yet.
func (h *historyView) unread() string {
	if h.err != "" {
		return "history is unavailable: " + line(h.err)
	}
	return "the evidence is still being read"
}

// move moves the selection: the heatmap's session, or the line of the fleet or since list.
func (h *historyView) move(d int) {
	if h.mode == histHeat {
		h.hs = max(h.hs+d, 0)
	} else {
		h.sel = max(h.sel+d, 0)
	}
}

func (h *historyView) typing() bool { return false }
func (h *historyView) click(int)    {}
func (h *historyView) footer() (string, string) {
	return "", ""
}
func (h *historyView) commands() []paletteEntry { return nil }

// input takes the wheel: it scrolls the open timeline, or moves the selection.
func (h *historyView) input(msg tea.Msg) intent {
	m, ok := msg.(tea.MouseWheelMsg)
	if !ok {
		return nil
	}
	d := 0
	switch m.Button {
	case tea.MouseWheelUp:
		d = -1
	case tea.MouseWheelDown:
		d = 1
	}
	switch {
	case h.tl != nil:
		h.scroll = max(h.scroll+3*d, 0)
	case h.ev != nil:
		h.move(d)
	}
	return nil
}

// SetSize keeps the room the view is drawn in.
func (h *historyView) SetSize(w, ht int) { h.w, h.h = w, ht }

// heat is the heatmap of the window ending at the cursor, with the selection clamped.
func (h *historyView) heat() history.Heat {
	hm := h.ev.Heat(h.cursor.Add(-histWindows[h.window]), h.cursor)
	h.hs = min(h.hs, max(len(hm.Sessions)-1, 0))
	h.hi = min(h.hi, max(len(hm.Items)-1, 0))
	return hm
}

func (h *historyView) since() history.SinceReport {
	mark := h.mark
	if !h.hasMark {
		mark = h.ev.Read.Add(-24 * time.Hour)
	}
	return h.ev.Since(mark, "")
}

// openTimeline shows the timeline of the selected heat cell, or of the selected since or
// fleet line's item.
func (h *historyView) openTimeline() {
	switch h.mode {
	case histHeat:
		hm := h.heat()
		if len(hm.Sessions) == 0 || len(hm.Items) == 0 {
			return
		}
		tl := h.ev.Timeline(hm.CellFilter(h.hs, h.hi))
		h.tl, h.tlName = &tl, hm.Sessions[h.hs]+" × "+hm.Items[h.hi].String()
	case histSince:
		r := h.since()
		if h.sel < len(r.Lines) && !r.Lines[h.sel].Item.Zero() {
			it := r.Lines[h.sel].Item
			tl := h.ev.Timeline(history.Filter{Item: it})
			h.tl, h.tlName = &tl, it.String()
		}
	case histFleet:
		fl := h.ev.At(h.cursor, 15*time.Minute)
		if h.sel < len(fl.Claims) {
			it := fl.Claims[h.sel].Item
			tl := h.ev.Timeline(history.Filter{Item: it})
			h.tl, h.tlName = &tl, it.String()
		}
	}
	h.scroll = 0
}

// histMsg carries the History view's evidence, read in a command.
type histMsg struct {
	gen     int
	ev      *history.Evidence
	mark    time.Time
	hasMark bool
	err     error
}

// seenMsg is the end of saving the last-seen mark.
type seenMsg struct{ err error }

// histCmd gathers the evidence and reads the last-seen mark (IO, off the UI goroutine).
func histCmd(
	load func(context.Context) (*history.Evidence, error),
	lastSeen func() (time.Time, bool, error),
	gen int,
) tea.Cmd {
	return func() tea.Msg {
		m := histMsg{gen: gen}
		if lastSeen != nil {
			var err error
			if m.mark, m.hasMark, err = lastSeen(); err != nil {
				m.hasMark = false
			}
		}
		m.ev, m.err = load(context.Background())
		return m
	}
}

func saveSeenCmd(save func(time.Time) error, t time.Time) tea.Cmd {
	if save == nil {
		return nil
	}
	return func() tea.Msg { return seenMsg{err: save(t)} }
}
