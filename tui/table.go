package tui

import (
	"slices"
	"strings"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"steward/termsafe"
)

// column describes one column of a table. cell, when set, computes the cell at draw time (a
// countdown); otherwise the row's static Cells[idx] is drawn.
type column struct {
	Title string
	Width int // minimum width
	Flex  int // share of the spare width
	Idx   int
	Cell  func(r *row, now time.Time) (string, lipgloss.Style)
	Sort  func(a, b *row) int // nil: not sortable
	Drop  int                 // when too narrow, columns with the highest Drop go first (0: never)
}

// table is a filtered, sorted, scrolled list of rows that renders only the visible rows.
type table struct {
	all     []column // every column; cols are those that fit the width
	cols    []column
	widths  []int
	rows    []row
	view    []int // indices into rows, filtered and sorted
	cursor  int   // index into view
	offset  int
	width   int
	height  int // rows visible, without the column header
	filter  string
	sortCol int // -1: snapshot order
	desc    bool
	marks   map[string]bool
}

func newTable(cols []column) table {
	for i := range cols {
		if cols[i].Idx == 0 && i > 0 {
			cols[i].Idx = i
		}
	}
	return table{all: cols, cols: cols, sortCol: -1, marks: map[string]bool{}}
}

// setRows replaces the rows, keeping the selection on the same key when it still exists and
// dropping marks of rows that are gone.
func (t *table) setRows(rows []row) {
	sel := t.selectedKey()
	t.rows = rows
	keys := make(map[string]bool, len(rows))
	for i := range rows {
		keys[rows[i].Key] = true
	}
	for k := range t.marks {
		if !keys[k] {
			delete(t.marks, k)
		}
	}
	t.rebuild(sel)
}

// rebuild recomputes the filtered and sorted view, keeping the cursor on key when possible.
func (t *table) rebuild(key string) {
	t.view = t.view[:0]
	terms := strings.Fields(strings.ToLower(t.filter))
	for i := range t.rows {
		if fuzzyAll(t.rows[i].Search, terms) {
			t.view = append(t.view, i)
		}
	}
	if t.sortCol >= 0 && t.sortCol < len(t.cols) && t.cols[t.sortCol].Sort != nil {
		less := t.cols[t.sortCol].Sort
		slices.SortStableFunc(t.view, func(a, b int) int {
			c := less(&t.rows[a], &t.rows[b])
			if t.desc {
				c = -c
			}
			return c
		})
	}
	t.cursor = 0
	for i, ri := range t.view {
		if t.rows[ri].Key == key {
			t.cursor = i
			break
		}
	}
	t.clamp()
}

func (t *table) setFilter(f string) {
	t.filter = f
	t.rebuild(t.selectedKey())
}

// cycleSort moves the sort to the next sortable column (then back to snapshot order).
func (t *table) cycleSort() {
	for i := t.sortCol + 1; i < len(t.cols); i++ {
		if t.cols[i].Sort != nil {
			t.sortCol = i
			t.rebuild(t.selectedKey())
			return
		}
	}
	t.sortCol = -1
	t.rebuild(t.selectedKey())
}

// sortBy sorts by the column titled title; it reports whether one was found.
func (t *table) sortBy(title string) bool {
	for i, c := range t.cols {
		if strings.EqualFold(c.Title, title) && c.Sort != nil {
			t.sortCol = i
			t.rebuild(t.selectedKey())
			return true
		}
	}
	return false
}

func (t *table) reverse() { t.desc = !t.desc; t.rebuild(t.selectedKey()) }

func (t *table) selected() *row {
	if t.cursor < 0 || t.cursor >= len(t.view) {
		return nil
	}
	return &t.rows[t.view[t.cursor]]
}

func (t *table) selectedKey() string {
	if r := t.selected(); r != nil {
		return r.Key
	}
	return ""
}

func (t *table) move(d int) { t.cursor += d; t.clamp() }

func (t *table) moveTo(i int) { t.cursor = i; t.clamp() }

func (t *table) clamp() {
	if t.cursor >= len(t.view) {
		t.cursor = len(t.view) - 1
	}
	if t.cursor < 0 {
		t.cursor = 0
	}
	h := max(t.height, 1)
	if t.cursor < t.offset {
		t.offset = t.cursor
	}
	if t.cursor >= t.offset+h {
		t.offset = t.cursor - h + 1
	}
	if t.offset > max(len(t.view)-h, 0) {
		t.offset = max(len(t.view)-h, 0)
	}
	if t.offset < 0 {
		t.offset = 0
	}
}

func (t *table) toggleMark() {
	if r := t.selected(); r != nil {
		if t.marks[r.Key] {
			delete(t.marks, r.Key)
		} else {
			t.marks[r.Key] = true
		}
	}
}

// markAll marks every shown row, or clears every mark when some are set.
func (t *table) markAll() {
	if len(t.marks) > 0 {
		clear(t.marks)
		return
	}
	for _, ri := range t.view {
		t.marks[t.rows[ri].Key] = true
	}
}

// marked returns the marked rows the filter shows, and how many marked rows it hides.
func (t *table) marked() (shown []*row, hidden int) {
	in := map[string]bool{}
	for _, ri := range t.view {
		if t.marks[t.rows[ri].Key] {
			shown = append(shown, &t.rows[ri])
			in[t.rows[ri].Key] = true
		}
	}
	return shown, len(t.marks) - len(in)
}

func (t *table) setSize(w, h int) {
	t.width, t.height = w, max(h-1, 1)
	t.layout()
	t.clamp()
}

// layout shares the width among the columns: minimums first, then the flex shares.
func (t *table) layout() {
	sortTitle := ""
	if t.sortCol >= 0 && t.sortCol < len(t.cols) {
		sortTitle = t.cols[t.sortCol].Title
	}
	t.cols = append(t.cols[:0:0], t.all...)
	need := func() int {
		n := 2
		for _, c := range t.cols {
			n += c.Width + 1
		}
		return n - 1
	}
	for need() > t.width {
		drop, at := 0, -1
		for i, c := range t.cols {
			if c.Drop > drop {
				drop, at = c.Drop, i
			}
		}
		if at < 0 {
			break
		}
		t.cols = append(t.cols[:at], t.cols[at+1:]...)
	}
	t.sortCol = -1
	for i, c := range t.cols {
		if sortTitle != "" && c.Title == sortTitle {
			t.sortCol = i
		}
	}
	t.widths = make([]int, len(t.cols))
	avail := t.width - 2 + 1 // selection and mark gutter; the last column has no separator
	flex := 0
	for i, c := range t.cols {
		t.widths[i] = c.Width
		avail -= c.Width + 1
		flex += c.Flex
	}
	if avail > 0 && flex > 0 {
		spare := avail
		for i, c := range t.cols {
			add := spare * c.Flex / flex
			t.widths[i] += add
			avail -= add
		}
		for i := len(t.cols) - 1; i >= 0 && avail > 0; i-- {
			if t.cols[i].Flex > 0 {
				t.widths[i] += avail
				avail = 0
			}
		}
	}
	// Too narrow: shrink from the right, keeping at least 3 cells.
	for i := len(t.cols) - 1; i >= 0 && avail < 0; i-- {
		cut := min(-avail, t.widths[i]-3)
		if cut > 0 {
			t.widths[i] -= cut
			avail += cut
		}
	}
}

// View renders the column header and the visible rows only.
func (t *table) View(now time.Time) string {
	var b strings.Builder
	b.WriteString("  ")
	for i, c := range t.cols {
		title := c.Title
		if i == t.sortCol {
			title += map[bool]string{false: "↑", true: "↓"}[t.desc]
		}
		b.WriteString(st.colHead.Render(pad(termsafe.Truncate(title, t.widths[i]), t.widths[i])))
		if i < len(t.cols)-1 {
			b.WriteByte(' ')
		}
	}
	end := min(t.offset+t.height, len(t.view))
	for vi := t.offset; vi < end; vi++ {
		r := &t.rows[t.view[vi]]
		b.WriteByte('\n')
		b.WriteString(t.renderRow(r, vi == t.cursor, now))
	}
	return b.String()
}

func (t *table) renderRow(r *row, selected bool, now time.Time) string {
	var b strings.Builder
	mark := " "
	if t.marks[r.Key] {
		mark = "•"
	}
	if selected {
		// The selected row is drawn reversed in one piece: one style render per frame.
		var line strings.Builder
		line.WriteString(mark)
		for i, c := range t.cols {
			s := t.cellText(r, c, now)
			line.WriteString(pad(truncate(s, t.widths[i]), t.widths[i]))
			if i < len(t.cols)-1 {
				line.WriteByte(' ')
			}
		}
		return st.bold.Render("▌") + st.sel.Render(line.String())
	}
	b.WriteByte(' ')
	if mark != " " {
		b.WriteString(st.mark.Render(mark))
	} else {
		b.WriteByte(' ')
	}
	for i, c := range t.cols {
		if c.Cell != nil {
			s, style := c.Cell(r, now)
			b.WriteString(style.Render(pad(truncate(s, t.widths[i]), t.widths[i])))
		} else {
			b.WriteString(pad(truncate(t.cellText(r, c, now), t.widths[i]), t.widths[i]))
		}
		if i < len(t.cols)-1 {
			b.WriteByte(' ')
		}
	}
	return b.String()
}

// cellText is a cell's text without its style.
func (t *table) cellText(r *row, c column, now time.Time) string {
	if c.Cell != nil {
		s, _ := c.Cell(r, now)
		return s
	}
	if c.Idx < len(r.Cells) {
		return r.Cells[c.Idx]
	}
	return ""
}

// truncate cuts an already safe string to w cells with an ellipsis.
func truncate(s string, w int) string {
	if ansi.StringWidth(s) <= w {
		return s
	}
	return ansi.Truncate(s, w, "…")
}

// pad right-pads s with spaces to w cells.
func pad(s string, w int) string {
	if n := ansi.StringWidth(s); n < w {
		return s + strings.Repeat(" ", w-n)
	}
	return s
}

// cmpTime orders zero times last.
func cmpTime(a, b time.Time) int {
	switch {
	case a.IsZero() && b.IsZero():
		return 0
	case a.IsZero():
		return 1
	case b.IsZero():
		return -1
	}
	return a.Compare(b)
}
