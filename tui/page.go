package tui

import (
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"steward/govern"
)

// shared is what the root lends every page: the clock reading of this frame, the digested
// snapshot and the keymap. Only the root writes it, in Update.
type shared struct {
	now  time.Time
	data *data
	keys KeyMap
	// theme is the configuration's; light is set when it (or, with theme auto, the
	// terminal's background) is light: Markdown is rendered in glamour's light style.
	theme theme
	light bool
	// ws is the workbench's other workspaces (nil: it shows one).
	ws *wsView
}

// listPage is a view built from rows: a table, a per-view filter, marks, sort and a detail
// pane. The overview is one too, with its counts and health drawn above the inbox.
type listPage struct {
	id        pageID
	env       *shared
	tbl       table
	filtering bool
	filter    field
	detail    bool
	scroll    int
	width     int
	height    int
	head      func(p *listPage) string
	md        mdCache
	raw       map[string]string // raw lock JSON by lock file, owned by the root
	// gone names the selected row that left the snapshot (the cursor is on its neighbour),
	// until the next key moves the cursor.
	gone string
	// routine shows the overview's routine rows; heartbeats lists heartbeat events one by
	// one on Activity.
	routine, heartbeats bool
}

func newListPage(id pageID, env *shared, raw map[string]string) *listPage {
	cols := pageColumns(id)
	if env.ws.all() {
		cols = withWorkspace(cols)
	}
	p := &listPage{id: id, env: env, tbl: newTable(cols), raw: raw, filter: newField(env.keys.Line, 200)}
	if id == pageOverview {
		p.head = overviewHead
	}
	return p
}

// SetRows gives the page its rows of the current snapshot; the cursor and the detail follow
// the selected row's identity, and say so when it left.
func (p *listPage) SetRows(rows []row) {
	if gone := p.tbl.setRows(rows); gone != "" {
		p.gone = gone
	}
}

// resumeSelection is called when the view is shown again.
func (p *listPage) resumeSelection() { p.tbl.clamp() }

// SetSize tells the page how much room its body has.
func (p *listPage) SetSize(w, h int) {
	p.width, p.height = w, h
	p.layout()
}

func (p *listPage) layout() {
	h := p.height - 1 // the page's status line
	if p.head != nil {
		h -= strings.Count(p.head(p), "\n") + 1
	}
	w := p.width
	if p.detail && p.split() {
		w = p.width * 11 / 20
	} else if p.detail {
		h = min(h, 4) // narrow: a few rows above the detail
	}
	p.tbl.setSize(w, max(h, 2))
}

// split reports whether the detail pane sits beside the table (wide terminals).
func (p *listPage) split() bool { return p.width >= 120 }

// bindings are the page's keys as they apply to the selected row now: the filter's while it
// is being typed, else the rows' and the acting ones.
func (p *listPage) bindings() bindings {
	if p.filtering {
		f, l := p.env.keys.Filter, p.env.keys.Line
		return bindings{
			bind(f.Accept, "Filter", true, nil, func() intent { p.filtering = false; p.filter.sel = false; return nil }),
			bind(f.Clear, "Filter", true, nil, func() intent { p.filtering = false; p.setFilter(""); return nil }),
			typing(l.DeleteBack, "Filter", true),
			typing(l.DeleteWord, "Filter", false),
			typing(l.ClearLine, "Filter", true),
		}
	}
	t, a := p.env.keys.Table, p.env.keys.Act
	sel := func() *row { return p.tbl.selected() }
	hasRow := onlyIf(func() bool { return sel() != nil }, "no row is selected")
	ro := p.env.ws.readOnly // in the all view nothing acts
	move := func(d func()) func() intent { return func() intent { d(); p.scroll, p.gone = 0, ""; return nil } }
	rows := bindings{
		bind(t.Up, "Rows", false, nil, move(func() { p.tbl.move(-1) })),
		bind(t.Down, "Rows", false, nil, move(func() { p.tbl.move(1) })),
		bind(t.Top, "Rows", false, nil, move(func() { p.tbl.moveTo(0) })),
		bind(t.Bottom, "Rows", false, nil, move(func() { p.tbl.moveTo(len(p.tbl.view) - 1) })),
		bind(t.PageUp, "Rows", false, nil, move(func() { p.tbl.move(-p.tbl.height) })),
		bind(t.PageDown, "Rows", false, nil, move(func() { p.tbl.move(p.tbl.height) })),
		bind(t.Filter, "Rows", true, nil, func() intent { p.filtering = true; p.filter.selectAll(); return nil }),
		bind(t.Sort, "Rows", true, onlyIf(func() bool { return len(p.tbl.sortable()) > 0 }, "nothing to sort by in this view"), func() intent { p.tbl.cycleSort(); return nil }),
		bind(t.Reverse, "Rows", false, onlyIf(func() bool { return p.tbl.sortCol >= 0 }, "the rows are in attention order; choose a sort with s first"), func() intent { p.tbl.reverse(); return nil }),
		bind(t.Detail, "Rows", true, hasRow, func() intent { p.detail = !p.detail; p.scroll = 0; p.layout(); return nil }),
		bind(t.DetailUp, "Rows", false, onlyIf(func() bool { return p.detail }, "the detail is closed (enter opens it)"), func() intent { p.scroll = max(p.scroll-5, 0); return nil }),
		bind(t.DetailDown, "Rows", false, onlyIf(func() bool { return p.detail }, "the detail is closed (enter opens it)"), func() intent { p.scroll += 5; return nil }),
		bind(t.Back, "Rows", false, onlyIf(func() bool { return p.detail || p.filter.String() != "" }, "no detail is open and no filter is set"), p.back),
	}
	switch p.id {
	case pageOverview:
		rows = append(rows, bind(t.Routine, "Rows", false, nil, func() intent { p.routine = !p.routine; return rowsIntent{p.routineNote()} }))
	case pageActivity:
		rows = append(rows, bind(t.Heartbeats, "Rows", false, nil, func() intent { p.heartbeats = !p.heartbeats; return rowsIntent{p.heartbeatNote()} }))
	}
	unsettled := ro(onlyIf(func() bool { r := sel(); return r != nil && r.Unsettled != nil },
		"applies to an audit attempt whose outcome is unknown (Activity, or the overview's inbox); this row is not one"))
	isAttn := ro(onlyIf(func() bool { r := sel(); return r != nil && attnKeyOf(r.Key) != "" },
		"applies to an attention entry (a question, a collision, an orphan with an action, a lost source); this row is not one"))
	// The acting keys first: the footer shows as many short ones as fit, in this order.
	acting := bindings{
		bind(a.Actions, "Acting", true, ro(onlyIf(func() bool {
			r := sel()
			return len(p.tbl.marks) > 0 || r != nil && (len(r.Actions) > 0 || r.Inspect != "")
		},
			"no action applies to this row")), p.actions),
		bind(a.Recover, "Acting", true, ro(onlyIf(func() bool { r := sel(); return r != nil && r.Recover != nil },
			"nothing of this row's item needs recovery (no expired or stale lease, no dead lock)")), func() intent {
			it := sel().Recover
			return planIntent{req: govern.Request{Action: govern.ActionRecover, Target: govern.Target{Item: it}},
				asking: "asking the core for the recover plan of " + it.String() + "…"}
		}),
		bind(a.Verify, "Acting", true, unsettled, func() intent { return auditIntent{kind: localVerify, att: sel().Unsettled} }),
		bind(a.Resolve, "Acting", true, unsettled, func() intent { return auditIntent{kind: localResolve, att: sel().Unsettled} }),
		bind(a.Copy, "Acting", true, onlyIf(func() bool { r := sel(); return r != nil && r.CopyID != "" }, "this row has no id to copy"),
			func() intent { r := sel(); return copyIntent{what: firstNonEmpty(r.CopyWhat, "id"), text: r.CopyID} }),
		bind(a.Jump, "Acting", true, onlyIf(func() bool { r := sel(); return r != nil && r.Origin.key != "" }, "this row is in its own view already"),
			func() intent {
				r := sel()
				if r.Workspace > 0 { // the all view: the row in its own workspace
					return cmdIntent{wsOpen(r.Workspace-1, r.Origin.page, r.Origin.key)}
				}
				return jumpIntent{page: r.Origin.page, key: r.Origin.key}
			}),
		bind(a.Ack, "Acting", true, isAttn, func() intent { return ackIntent{attnKeyOf(sel().Key)} }),
		bind(a.Snooze, "Acting", true, isAttn, func() intent { return snoozeIntent{entry: attnKeyOf(sel().Key)} }),
		bind(a.Mark, "Acting", true, hasRow, func() intent { p.tbl.toggleMark(); p.tbl.move(1); return nil }),
		bind(a.ClearMarks, "Acting", true, onlyIf(func() bool { return len(p.tbl.marks) > 0 }, "no row is marked"), func() intent {
			n := len(p.tbl.marks)
			clear(p.tbl.marks)
			return noteIntent{fmt.Sprintf("cleared %d mark(s) in %s", n, pageTitles[p.id])}
		}),
		bind(a.MarkAll, "Acting", false, onlyIf(func() bool { return len(p.tbl.view) > 0 }, "no row is shown"), func() intent { p.tbl.markAll(); return nil }),
		bind(a.Open, "Acting", false, onlyIf(func() bool { r := sel(); return r != nil && r.URL != "" }, "no browser address is known for this row"),
			func() intent { return openIntent{sel().URL} }),
	}
	return append(acting, rows...)
}

// rawWanted is the selected row when its detail is open and its lock file's raw JSON is not
// loaded yet; nil otherwise.
func (p *listPage) rawWanted() *row {
	sel := p.tbl.selected()
	if !p.detail || sel == nil || sel.LockFile == "" {
		return nil
	}
	if _, ok := p.raw[sel.LockFile]; ok {
		return nil
	}
	return sel
}

// back closes the detail, or clears the filter.
func (p *listPage) back() intent {
	if p.detail {
		p.detail = false
		p.layout()
	} else {
		p.setFilter("")
	}
	return nil
}

func (p *listPage) setFilter(s string) {
	p.filter.set(s)
	p.tbl.setFilter(s)
}

func (p *listPage) routineNote() string {
	if p.routine {
		return "routine rows shown in the inbox (h hides them)"
	}
	return "routine rows hidden from the inbox (h shows them)"
}

func (p *listPage) heartbeatNote() string {
	if p.heartbeats {
		return "heartbeats shown one by one (b folds them into a count per item)"
	}
	return "heartbeats folded into a count per item (b shows them one by one)"
}

// input takes typing: into the filter while it is being typed; nothing otherwise.
func (p *listPage) input(msg tea.Msg) intent {
	if !p.filtering {
		return nil
	}
	if p.filter.input(msg) {
		p.tbl.setFilter(p.filter.String())
	}
	return nil
}

// wheel scrolls the rows.
func (p *listPage) wheel(m tea.MouseWheelMsg) {
	switch m.Button {
	case tea.MouseWheelUp:
		p.tbl.move(-3)
	case tea.MouseWheelDown:
		p.tbl.move(3)
	}
}

// click selects the row at body line y (0 is the page's first line).
func (p *listPage) click(y int) {
	top := 1 + 1 // status line, column header
	if p.head != nil {
		top += strings.Count(p.head(p), "\n") + 1
	}
	if i := y - top; i >= 0 && i < p.tbl.height {
		p.tbl.moveTo(p.tbl.offset + i)
		p.gone = ""
	}
}

// actions returns the marked rows the filter shows, or the selected row when none is marked.
func (p *listPage) actions() intent {
	if len(p.tbl.marks) > 0 {
		shown, hidden := p.tbl.marked()
		if len(shown) == 0 {
			return noteIntent{fmt.Sprintf("the filter hides all %d marked rows; clear the filter, or u clears the marks", hidden)}
		}
		return actIntent{rows: shown, hidden: hidden}
	}
	if r := p.tbl.selected(); r != nil {
		return actIntent{rows: []*row{r}}
	}
	return nil
}
