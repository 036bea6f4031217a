package tui

import (
	"context"
	"fmt"
	"strings"
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
	heat := onlyIf(func() bool { return h.ev != nil && h.mode == histHeat }, "moves between the heatmap's items (m shows the heatmap)")
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

// View draws the view in its room.
func (h *historyView) View() string {
	w, ht := h.w, h.h
	var lines []string
	switch {
	case h.loading:
		lines = []string{st.title.Render("History"), "reading the evidence (events, leases, locks with retired/, the audit log) …"}
	case h.err != "":
		lines = []string{st.title.Render("History"), st.bad.Render("history unavailable: " + line(h.err))}
	case h.tl != nil:
		return fitLines(h.timelineLines(ht), w, ht, 0)
	default:
		head := st.title.Render("History") + " · " + st.badge.Render(" as of "+history.Stamp(h.cursor)+", reconstructed ") +
			" · read " + history.Stamp(h.ev.Read) + " · actions disabled"
		var tabs []string
		for i, n := range histModeNames {
			if n == "Heatmap" {
				n += " " + shortDur(histWindows[h.window])
			}
			if histMode(i) == h.mode {
				tabs = append(tabs, st.tabOn.Render(" "+n+" "))
			} else {
				tabs = append(tabs, st.tabOff.Render(" "+n+" "))
			}
		}
		lines = []string{head, strings.Join(tabs, "") + st.dim.Render("  step "+shortDur(histSteps[h.step]))}
		switch h.mode {
		case histFleet:
			lines = append(lines, h.fleetLines()...)
		case histHeat:
			lines = append(lines, heatLines(h.heat(), h.hs, h.hi, w, ht-2)...)
		case histSince:
			lines = append(lines, h.sinceLines()...)
		}
	}
	return fitLines(lines, w, ht, h.scroll)
}

// fit cuts lines to the box, scrolled (the first two lines, the view's head, stay).
func fitLines(lines []string, w, ht, scroll int) string {
	if len(lines) > ht {
		keep := min(2, len(lines))
		body := lines[keep:]
		scroll = min(scroll, max(len(body)-(ht-keep), 0))
		end := min(scroll+ht-keep, len(body))
		lines = append(lines[:keep:keep], body[scroll:end]...)
	}
	for i := range lines {
		lines[i] = pad(truncate(lines[i], w), w)
	}
	return strings.Join(lines, "\n")
}

func shortDur(d time.Duration) string {
	if d >= time.Hour && d%time.Hour == 0 {
		return fmt.Sprintf("%dh", d/time.Hour)
	}
	return fmt.Sprintf("%dm", d/time.Minute)
}

func (h *historyView) fleetLines() []string {
	fl := h.ev.At(h.cursor, 15*time.Minute)
	out := []string{st.bold.Render(fmt.Sprintf("Claims live then (%d)", len(fl.Claims)))}
	h.sel = min(h.sel, max(len(fl.Claims)-1, 0))
	for i, c := range fl.Claims {
		state := string(c.State)
		switch c.State {
		case history.ClaimHeld:
			state = "held, expires " + hms(c.Expires)
		case history.ClaimPastExpiry:
			state = st.bad.Render("PAST EXPIRY " + hms(c.Expires))
		case history.ClaimExpiryUnknown:
			state = st.warn.Render("expiry then unknown")
		case history.ClaimLockOnly:
			state = st.warn.Render("lock only")
		}
		s := fmt.Sprintf("%-20s %-14s since %s  %s", line(c.Item.String()), line(c.Session), hms(c.Since), state)
		if !c.Ended.IsZero() {
			s += st.dim.Render("  ended " + history.Stamp(c.Ended))
		}
		if i == h.sel {
			s = st.sel.Render("▌") + s
		} else {
			s = " " + s
		}
		out = append(out, s)
	}
	if len(fl.Collisions) == 0 {
		out = append(out, "Collisions: none")
	}
	for _, c := range fl.Collisions {
		out = append(out, st.bad.Render("Collision: "+line(c.Item.String())+" held by "+line(strings.Join(c.Sessions, " and "))))
	}
	ref := "Refused in the 15m before:"
	if len(fl.Contention) == 0 {
		ref += " none"
	}
	out = append(out, ref)
	for _, c := range fl.Contention {
		out = append(out, fmt.Sprintf("  %-20s %d (%s)", line(c.Item.String()), c.Refusals, line(strings.Join(c.Sessions, ", "))))
	}
	out = append(out, st.warn.Render("Unknown then:"))
	for _, u := range fl.Unknown {
		out = append(out, "  - "+line(u))
	}
	return out
}

// hms is an instant as hh:mm:ss (the day is in the header).
func hms(t time.Time) string {
	if t.IsZero() {
		return "?"
	}
	return t.UTC().Format("15:04:05")
}

func (h *historyView) sinceLines() []string {
	h.sawSince = true
	r := h.since()
	what := "Since you left (" + history.Stamp(r.Since) + ")"
	if !h.hasMark {
		what = "No last-seen mark yet: the last 24 hours (" + history.Stamp(r.Since) + ")"
	}
	out := []string{st.bold.Render(what)}
	if len(r.Lines) == 0 {
		out = append(out, "  nothing recorded changed")
	}
	h.sel = min(h.sel, max(len(r.Lines)-1, 0))
	var cat history.Category
	for i, l := range r.Lines {
		if l.Category != cat {
			cat = l.Category
			out = append(out, st.colHead.Render(string(cat)))
		}
		s := line(l.Text)
		if !l.At.IsZero() {
			s = hms(l.At) + "  " + s
		}
		if i == h.sel {
			s = st.sel.Render("▌") + s
		} else {
			s = " " + s
		}
		out = append(out, s)
	}
	return out
}

func (h *historyView) timelineLines(ht int) []string {
	tl := h.tl
	out := []string{st.title.Render("Timeline of "+line(h.tlName)) + fmt.Sprintf(" · %d entries", len(tl.Entries)) + st.dim.Render(" · j/k scroll · esc back"), ""}
	// Only the lines on screen are drawn: a timeline may hold tens of thousands of entries.
	total := len(tl.Entries) + 1 + len(tl.Gaps)
	h.scroll = min(h.scroll, max(total-(ht-2), 0))
	for i := h.scroll; i < total && len(out) < ht; i++ {
		switch {
		case i < len(tl.Entries):
			e := tl.Entries[i]
			who := e.Session
			if e.Actor != "" && e.Actor != e.Session {
				who = strings.Trim(who+" ("+e.Actor+")", " ")
			}
			out = append(out, fmt.Sprintf("%s %-6s %-9s %-12s %s", hms(e.At), e.Source, e.Kind, line(who), line(e.Text)))
		case i == len(tl.Entries):
			out = append(out, st.warn.Render("Gaps (evidence missing, not \"nothing happened\"):"))
		default:
			out = append(out, "  "+line(tl.Gaps[i-len(tl.Entries)-1].String()))
		}
	}
	return out
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
func histCmd(load func(context.Context) (*history.Evidence, error), lastSeen func() (time.Time, bool, error), gen int) tea.Cmd {
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
