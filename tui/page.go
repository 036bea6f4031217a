package tui

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// shared is what the root lends every page: the clock reading of this frame, the digested
// snapshot and the keymap. Only the root writes it, in Update.
type shared struct {
	now  time.Time
	data *data
	keys KeyMap
}

// Intents a page returns to the root; only the root turns them into commands.
type (
	actIntent struct {
		rows   []*row
		hidden int // marked rows the filter hides (not included)
	}
	openIntent struct{ url string }
	// auditIntent asks for the verifier (verify) or the resolve dialog (resolve) on an
	// attempt whose outcome is unknown.
	auditIntent struct {
		kind string // localVerify | localResolve
		att  *attemptRef
	}
	copyIntent struct{ text string }
	noteIntent struct{ text string } // a status-line note (why a key did nothing)
)

// listPage is a view built from rows: a table, a per-view filter, marks, sort and a detail
// pane. The overview is one too, with its counts and health drawn above the inbox.
type listPage struct {
	id        pageID
	env       *shared
	tbl       table
	filtering bool
	filter    lineEdit
	detail    bool
	scroll    int
	width     int
	height    int
	head      func(p *listPage) string
	md        mdCache
	raw       map[string]string // raw lock JSON by lock file, owned by the root
}

func newListPage(id pageID, env *shared, cols []column) *listPage {
	return &listPage{id: id, env: env, tbl: newTable(cols)}
}

// SetRows gives the page its rows of the current snapshot.
func (p *listPage) SetRows(rows []row) { p.tbl.setRows(rows) }

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

// KeyMap returns the page's bindings, disabled where they do not apply to the current row.
func (p *listPage) KeyMap() []key.Binding {
	t := p.env.keys.Table
	r := p.tbl.selected()
	en := func(b key.Binding, on bool) key.Binding { b.SetEnabled(on); return b }
	return []key.Binding{
		t.Up, t.Down, t.Top, t.Bottom, t.PageUp, t.PageDown, t.Filter, t.Sort, t.Reverse,
		en(t.Detail, r != nil), en(t.DetailUp, p.detail), en(t.DetailDown, p.detail), en(t.Back, p.detail || p.filter.String() != ""),
		en(t.Mark, r != nil), en(t.MarkAll, len(p.tbl.view) > 0),
		en(t.Actions, r != nil && (len(r.Actions) > 0 || r.Inspect != "")),
		en(t.Open, r != nil && r.URL != ""), en(t.Copy, r != nil && r.CopyID != ""),
		en(t.Verify, r != nil && r.Unsettled != nil), en(t.Resolve, r != nil && r.Unsettled != nil),
		en(t.Ack, r != nil && attnKeyOf(r.Key) != ""),
	}
}

// Filtering reports whether the filter field has the keyboard.
func (p *listPage) Filtering() bool { return p.filtering }

// Update handles a key or mouse message for the page and returns an intent for the root.
func (p *listPage) Update(msg tea.Msg) any {
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		return p.key(msg)
	case tea.MouseWheelMsg:
		if msg.Button == tea.MouseWheelUp {
			p.tbl.move(-3)
		} else if msg.Button == tea.MouseWheelDown {
			p.tbl.move(3)
		}
	}
	return nil
}

// click selects the row at body line y (0 is the page's first line).
func (p *listPage) click(y int) {
	top := 1 + 1 // status line, column header
	if p.head != nil {
		top += strings.Count(p.head(p), "\n") + 1
	}
	if i := y - top; i >= 0 && i < p.tbl.height {
		p.tbl.moveTo(p.tbl.offset + i)
	}
}

func (p *listPage) key(k tea.KeyPressMsg) any {
	t := p.env.keys.Table
	if p.filtering {
		switch k.String() {
		case "enter":
			p.filtering = false
		case "esc":
			p.filtering = false
			p.filter.set("")
			p.tbl.setFilter("")
		default:
			if p.filter.update(k) {
				p.tbl.setFilter(p.filter.String())
			}
		}
		return nil
	}
	switch {
	case key.Matches(k, t.Up):
		p.tbl.move(-1)
		p.scroll = 0
	case key.Matches(k, t.Down):
		p.tbl.move(1)
		p.scroll = 0
	case key.Matches(k, t.Top):
		p.tbl.moveTo(0)
	case key.Matches(k, t.Bottom):
		p.tbl.moveTo(len(p.tbl.view) - 1)
	case key.Matches(k, t.PageUp):
		p.tbl.move(-p.tbl.height)
	case key.Matches(k, t.PageDown):
		p.tbl.move(p.tbl.height)
	case key.Matches(k, t.Filter):
		p.filtering = true
	case key.Matches(k, t.Sort):
		p.tbl.cycleSort()
	case key.Matches(k, t.Reverse):
		p.tbl.reverse()
	case key.Matches(k, t.Detail):
		if p.tbl.selected() != nil {
			p.detail = !p.detail
			p.layout()
		}
	case key.Matches(k, t.DetailUp):
		p.scroll = max(p.scroll-5, 0)
	case key.Matches(k, t.DetailDown):
		if p.detail {
			p.scroll += 5
		}
	case key.Matches(k, t.Back):
		if p.detail {
			p.detail = false
			p.layout()
		} else if p.filter.String() != "" {
			p.filter.set("")
			p.tbl.setFilter("")
		}
	case key.Matches(k, t.Mark) || k.String() == "space":
		p.tbl.toggleMark()
		p.tbl.move(1)
	case key.Matches(k, t.MarkAll):
		p.tbl.markAll()
	case key.Matches(k, t.Actions):
		return p.actions()
	case key.Matches(k, t.Open):
		if r := p.tbl.selected(); r != nil && r.URL != "" {
			return openIntent{r.URL}
		}
		return noteIntent{"no browser address is known for this row"}
	case key.Matches(k, t.Copy):
		if r := p.tbl.selected(); r != nil && r.CopyID != "" {
			return copyIntent{r.CopyID}
		}
	case key.Matches(k, t.Verify):
		return p.audit(localVerify)
	case key.Matches(k, t.Resolve):
		return p.audit(localResolve)
	}
	return nil
}

// audit returns the verify or resolve intent for the selected row, or a note saying why the
// row has none.
func (p *listPage) audit(kind string) any {
	r := p.tbl.selected()
	if r == nil || r.Unsettled == nil {
		return noteIntent{"verify and resolve apply to an audit attempt whose outcome is unknown (Activity, or the overview's inbox); this row is not one"}
	}
	return auditIntent{kind: kind, att: r.Unsettled}
}

// actions returns the marked rows the filter shows, or the selected row when none is marked.
func (p *listPage) actions() any {
	if len(p.tbl.marks) > 0 {
		shown, hidden := p.tbl.marked()
		if len(shown) == 0 {
			return noteIntent{fmt.Sprintf("the filter hides all %d marked rows", hidden)}
		}
		return actIntent{rows: shown, hidden: hidden}
	}
	if r := p.tbl.selected(); r != nil {
		return actIntent{rows: []*row{r}}
	}
	return nil
}

// View draws the page's status line, its honesty banner and the visible rows.
func (p *listPage) View() string {
	var b strings.Builder
	if p.head != nil {
		b.WriteString(p.head(p))
		b.WriteByte('\n')
	}
	b.WriteString(p.statusLine())
	b.WriteByte('\n')
	body := p.body()
	if p.detail && p.tbl.selected() != nil {
		if p.split() {
			dw := p.width - p.tbl.width - 1
			body = joinColumns(body, p.detailView(dw, p.tbl.height+1), p.tbl.width)
		} else {
			body += "\n" + p.detailView(p.width, p.height-p.tbl.height-3)
		}
	}
	b.WriteString(body)
	return b.String()
}

func (p *listPage) statusLine() string {
	d := p.env.data
	parts := []string{st.title.Render(pageTitles[p.id])}
	parts = append(parts, fmt.Sprintf("%d of %d", len(p.tbl.view), len(p.tbl.rows)))
	if p.filtering {
		parts = append(parts, "filter: "+p.filter.view(24))
	} else if f := p.filter.String(); f != "" {
		parts = append(parts, "filter: "+truncate(f, 24))
	}
	if p.tbl.sortCol >= 0 {
		parts = append(parts, "sort: "+p.tbl.cols[p.tbl.sortCol].Title+map[bool]string{false: "↑", true: "↓"}[p.tbl.desc])
	}
	if n := len(p.tbl.marks); n > 0 {
		_, hidden := p.tbl.marked()
		m := fmt.Sprintf("%d marked", n)
		if hidden > 0 {
			m += fmt.Sprintf(" (%d hidden by the filter)", hidden)
		}
		parts = append(parts, st.mark.Render(m))
	}
	if d.Loaded {
		parts = append(parts, st.dim.Render("snapshot "+since(d.Generated, p.env.now)+" old"))
	}
	return truncate(strings.Join(parts, " · "), p.width)
}

// body is the table, or the words that say why there is none.
func (p *listPage) body() string {
	d := p.env.data
	if !d.Loaded {
		return st.warn.Render("waiting for the first snapshot…")
	}
	var down, partial []string
	for _, name := range pageSources[p.id] {
		h := d.source(name)
		switch {
		case !h.usable():
			down = append(down, name+" "+strings.ReplaceAll(h.State, "_", " ")+reason(h.Reason))
		case h.State == "degraded":
			partial = append(partial, name+" degraded"+reason(h.Reason))
		}
	}
	srcs := pageSources[p.id]
	if len(srcs) > 0 && len(down) == len(srcs) {
		return st.bad.Render(truncate("unavailable — "+strings.Join(down, "; "), p.width))
	}
	var banner string
	if len(down)+len(partial) > 0 {
		banner = st.warn.Render(truncate("partial — "+strings.Join(append(down, partial...), "; "), p.width)) + "\n"
	}
	switch {
	case len(p.tbl.rows) == 0 && banner != "":
		return banner + "none found (partial inventory)"
	case len(p.tbl.rows) == 0:
		return "none"
	case len(p.tbl.view) == 0:
		return banner + fmt.Sprintf("no row matches the filter %q (%d hidden)", p.filter.String(), len(p.tbl.rows))
	}
	return banner + p.tbl.View(p.env.now)
}

func reason(r string) string {
	if r == "" {
		return ""
	}
	return ": " + r
}

// joinColumns puts right beside left, left padded to lw cells.
func joinColumns(left, right string, lw int) string {
	ll := strings.Split(left, "\n")
	rl := strings.Split(right, "\n")
	n := max(len(ll), len(rl))
	var b strings.Builder
	for i := 0; i < n; i++ {
		var l, r string
		if i < len(ll) {
			l = ll[i]
		}
		if i < len(rl) {
			r = rl[i]
		}
		b.WriteString(pad(l, lw))
		b.WriteString(st.dim.Render("│"))
		b.WriteString(r)
		if i < n-1 {
			b.WriteByte('\n')
		}
	}
	return b.String()
}
