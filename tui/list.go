package tui

import (
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"steward/govern"
	"steward/govern/actionid"
)

// shared is what the root lends every view: the clock reading of this frame, the digested
// snapshot, the keymap and what is fixed for the workbench's life. Only the root writes it,
// in Update.
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
	// knows reports whether the governed core has an action (none without a core).
	knows func(action string) bool
	// raw is the raw JSON of lock files by name, read for the detail pane (the root's
	// rawLocks reads it; the views only look).
	raw map[string]string
}

// listView is the one list every tab is built on: a table of rows with a per-view filter,
// marks, sort, and a detail pane beside or below it. A tab embeds it, gives it its columns,
// and sets what it shows besides its rows (the hooks); the keys, the layout, the status
// line and the detail are the list's.
type listView struct {
	id        pageID
	env       *shared
	tbl       table
	filtering bool
	filter    field
	detail    bool
	scroll    pager // the detail pane's
	width     int
	height    int
	md        mdCache
	// gone names the selected row that left the snapshot (the cursor is on its neighbour),
	// until the next key moves the cursor.
	gone string

	// head, when set, is drawn above the status line (the overview's counts and health);
	// headH is how many lines it took when the list was last laid out.
	head  func() string
	headH int
	// status, when set, adds parts to the status line (Activity's window of the history).
	status func() []string
	// empty, when set, is the body's word when there are no rows at all ("none").
	empty func() string
	// order names the rows' own order in the status line when no sort is chosen ("" when
	// it goes without saying: a timeline).
	order string
}

var _ tab = (*listView)(nil)

// newList returns the list of tab id with its columns (in the all view, under a Workspace
// column).
func newList(id pageID, env *shared, cols []column) *listView {
	if env.ws.all() {
		cols = withWorkspace(cols)
	}
	return &listView{id: id, env: env, tbl: newTable(cols), filter: newField(env.keys.Line, 200), order: "attention"}
}

func (p *listView) list() *listView { return p }

// setData gives the list the rows the snapshot has for its tab (the tabs whose rows need
// more than that have their own).
func (p *listView) setData(d *data) { p.setRows(d.Rows[p.id], d.hints[p.id]) }

// setRows gives the list its rows of the current snapshot (hint: what the digest knows of
// them); the cursor and the detail follow the selected row's identity, and say so when it
// left. A head whose height changed takes its room from the rows.
func (p *listView) setRows(rows []*row, hint rowsHint) {
	p.tbl.hint = hint
	if gone := p.tbl.setRows(rows); gone != "" {
		p.gone = gone
	}
	if p.head != nil && lines(p.head()) != p.headH {
		p.layout()
	}
}

// resumeSelection is called when the view is shown again.
func (p *listView) resumeSelection() { p.tbl.clamp() }

// SetSize tells the list how much room its body has.
func (p *listView) SetSize(w, h int) {
	p.width, p.height = w, h
	p.layout()
}

func (p *listView) layout() {
	h := p.height - 1 // the status line
	if p.head != nil {
		p.headH = lines(p.head())
		h -= p.headH
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
func (p *listView) split() bool { return p.width >= 120 }

// typing reports whether the filter is being typed: every key but the filter's types.
func (p *listView) typing() bool { return p.filtering }

// bindings are the list's keys as they apply to the selected row now: the filter's while
// it is being typed, else the acting ones and the rows'.
func (p *listView) bindings() bindings {
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
	// The acting keys first: the footer shows as many short ones as fit, in this order.
	return append(p.acting(), p.rows()...)
}

// rows are the keys that move, filter, sort and open the detail.
func (p *listView) rows() bindings {
	t := p.env.keys.Table
	move := func(d func()) func() intent {
		return func() intent { d(); p.scroll.top(); p.gone = ""; return nil }
	}
	closed := onlyIf(func() bool { return p.detail }, "the detail is closed (enter opens it)")
	return bindings{
		bind(t.Up, "Rows", false, nil, move(func() { p.tbl.move(-1) })),
		bind(t.Down, "Rows", false, nil, move(func() { p.tbl.move(1) })),
		bind(t.Top, "Rows", false, nil, move(func() { p.tbl.moveTo(0) })),
		bind(t.Bottom, "Rows", false, nil, move(func() { p.tbl.moveTo(len(p.tbl.view) - 1) })),
		bind(t.PageUp, "Rows", false, nil, move(func() { p.tbl.move(-p.tbl.height) })),
		bind(t.PageDown, "Rows", false, nil, move(func() { p.tbl.move(p.tbl.height) })),
		bind(t.Filter, "Rows", true, nil, func() intent { p.filtering = true; p.filter.selectAll(); return nil }),
		bind(
			t.Sort,
			"Rows",
			true,
			onlyIf(func() bool { return len(p.tbl.sortable()) > 0 }, "nothing to sort by in this view"),
			func() intent { p.tbl.cycleSort(); return nil },
		),
		bind(
			t.Reverse,
			"Rows",
			false,
			onlyIf(func() bool { return p.tbl.sortCol >= 0 }, "the rows are in attention order; choose a sort with s first"),
			func() intent { p.tbl.reverse(); return nil },
		),
		bind(
			t.Detail,
			"Rows",
			true,
			p.hasRow(),
			func() intent { p.detail = !p.detail; p.scroll.top(); p.layout(); return nil },
		),
		bind(t.DetailUp, "Rows", false, closed, func() intent { p.scroll.by(-5); return nil }),
		bind(t.DetailDown, "Rows", false, closed, func() intent { p.scroll.by(5); return nil }),
		bind(
			t.Back,
			"Rows",
			false,
			onlyIf(func() bool { return p.detail || p.filter.String() != "" }, "no detail is open and no filter is set"),
			p.back,
		),
	}
}

// hasRow is the reason of the keys that need a selected row.
func (p *listView) hasRow() func() string {
	return onlyIf(func() bool { return p.tbl.selected() != nil }, "no row is selected")
}

// acting are the keys that act on the selected or marked rows; in the all view none acts.
func (p *listView) acting() bindings {
	a := p.env.keys.Act
	sel := func() *row { return p.tbl.selected() }
	ro := p.env.ws.readOnly
	unsettled := ro(onlyIf(func() bool { r := sel(); return r != nil && r.Unsettled != nil },
		"applies to an audit attempt whose outcome is unknown (Activity, or the overview's inbox); this row is not one"))
	isAttn := ro(onlyIf(
		func() bool { r := sel(); return r != nil && attnKeyOf(r.Key) != "" },
		"applies to an attention entry (a question, a collision, an orphan with an action, a lost source); this row is "+
			"not one",
	))
	return bindings{
		bind(a.Actions, "Acting", true, ro(onlyIf(func() bool {
			r := sel()
			return len(p.tbl.marks) > 0 || r != nil && (len(r.Actions) > 0 || r.Inspect != "" || r.Next != "")
		}, "no action applies to this row")), p.actions),
		bind(a.Recover, "Acting", true, ro(onlyIf(func() bool { r := sel(); return r != nil && r.Recover != nil },
			"nothing of this row's item needs recovery (no expired or stale lease, no dead lock)")), func() intent {
			it := sel().Recover
			return planIntent{req: govern.Request{Action: actionid.Recover, Target: govern.Target{Item: it}},
				asking: "asking the core for the recover plan of " + it.String() + "…"}
		}),
		bind(
			a.Verify,
			"Acting",
			true,
			unsettled,
			func() intent { return auditIntent{kind: localVerify, att: sel().Unsettled} },
		),
		bind(
			a.Resolve,
			"Acting",
			true,
			unsettled,
			func() intent { return auditIntent{kind: localResolve, att: sel().Unsettled} },
		),
		bind(
			a.Copy,
			"Acting",
			true,
			onlyIf(func() bool { r := sel(); return r != nil && r.CopyID != "" }, "this row has no id to copy"),
			func() intent { r := sel(); return copyIntent{what: firstNonEmpty(r.CopyWhat, "id"), text: r.CopyID} },
		),
		bind(
			a.Jump,
			"Acting",
			true,
			onlyIf(func() bool { r := sel(); return r != nil && r.Origin.key != "" }, "this row is in its own view already"),
			func() intent {
				r := sel()
				if r.Workspace > 0 { // the all view: the row in its own workspace
					return cmdIntent{wsOpen(r.Workspace-1, r.Origin.page, r.Origin.key)}
				}
				return jumpIntent{page: r.Origin.page, key: r.Origin.key}
			},
		),
		bind(a.Ack, "Acting", true, isAttn, func() intent { return ackIntent{attnKeyOf(sel().Key)} }),
		bind(a.Snooze, "Acting", true, isAttn, func() intent { return snoozeIntent{entry: attnKeyOf(sel().Key)} }),
		bind(a.Mark, "Acting", true, p.hasRow(), func() intent { p.tbl.toggleMark(); p.tbl.move(1); return nil }),
		bind(
			a.ClearMarks,
			"Acting",
			true,
			onlyIf(func() bool { return len(p.tbl.marks) > 0 }, "no row is marked"),
			func() intent {
				n := len(p.tbl.marks)
				clear(p.tbl.marks)
				return noteIntent{fmt.Sprintf("cleared %d mark(s) in %s", n, p.id.title())}
			},
		),
		bind(
			a.MarkAll,
			"Acting",
			false,
			onlyIf(func() bool { return len(p.tbl.view) > 0 }, "no row is shown"),
			func() intent { p.tbl.markAll(); return nil },
		),
		bind(
			a.Open,
			"Acting",
			false,
			onlyIf(func() bool { r := sel(); return r != nil && r.URL != "" }, "no browser address is known for this row"),
			func() intent { return openIntent{sel().URL} },
		),
	}
}

// rawWanted is the selected row when its detail is open and its lock file's raw JSON is not
// loaded yet; nil otherwise.
func (p *listView) rawWanted() *row {
	sel := p.tbl.selected()
	if !p.detail || sel == nil || sel.LockFile == "" {
		return nil
	}
	if _, ok := p.env.raw[sel.LockFile]; ok {
		return nil
	}
	return sel
}

// back closes the detail, or clears the filter.
func (p *listView) back() intent {
	if p.detail {
		p.detail = false
		p.layout()
	} else {
		p.setFilter("")
	}
	return nil
}

func (p *listView) setFilter(s string) {
	p.filter.set(s)
	p.tbl.setFilter(s)
}

// input takes typing into the filter while it is being typed; the wheel scrolls the rows.
func (p *listView) input(msg tea.Msg) intent {
	if m, ok := msg.(tea.MouseWheelMsg); ok {
		switch m.Button {
		case tea.MouseWheelUp:
			p.tbl.move(-3)
		case tea.MouseWheelDown:
			p.tbl.move(3)
		}
		return nil
	}
	if p.filtering && p.filter.input(msg) {
		p.tbl.setFilter(p.filter.String())
	}
	return nil
}

// click selects the row at body line y (0 is the view's first line).
func (p *listView) click(y int) {
	top := 1 + 1 + p.headH // status line, column header, head
	if i := y - top; i >= 0 && i < p.tbl.height {
		p.tbl.moveTo(p.tbl.offset + i)
		p.gone = ""
	}
}

// actions returns the marked rows the filter shows, or the selected row when none is marked.
func (p *listView) actions() intent {
	if len(p.tbl.marks) > 0 {
		shown, hidden := p.tbl.marked()
		if len(shown) == 0 {
			return noteIntent{
				fmt.Sprintf("the filter hides all %d marked rows; clear the filter, or u clears the marks", hidden),
			}
		}
		return actIntent{rows: shown, hidden: hidden}
	}
	if r := p.tbl.selected(); r != nil {
		return actIntent{rows: []*row{r}}
	}
	return nil
}

// footer says the filter is being typed, or names the columns too narrow a screen hides.
func (p *listView) footer() (pre, post string) {
	if p.filtering {
		return st.mark.Render("FILTER") + " type to filter  ", ""
	}
	if hid := p.tbl.hidden(); len(hid) > 0 {
		post = "  hidden: " + strings.Join(hid, ", ")
		if ansi.StringWidth(post) > p.width/3 {
			post = fmt.Sprintf("  +%d cols hidden", len(hid))
		}
	}
	return "", post
}

// commands offer a sort by each sortable column.
func (p *listView) commands() []paletteEntry {
	var out []paletteEntry
	for _, c := range p.tbl.sortable() {
		title := c
		out = append(out, paletteEntry{label: "sort by " + title, run: func() intent {
			p.tbl.sortBy(title)
			return nil
		}})
	}
	return out
}

// lines counts the lines of s.
func lines(s string) int { return strings.Count(s, "\n") + 1 }
