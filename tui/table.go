package tui

import (
	"cmp"
	"slices"
	"sort"
	"strings"
)

// table is a filtered, sorted, scrolled list of rows that renders only the visible rows.
type table struct {
	all     []column // every column; cols are those that fit the width
	cols    []column
	widths  []int
	prefix  []int // per shown column: the cells of the values' shared prefix (Elide)
	dropped []string
	rows    []*row
	view    []int // indices into rows, filtered and sorted
	cursor  int   // index into view
	offset  int
	width   int
	height  int // rows visible, without the column header
	filter  string
	sortCol int // -1: the rows' own (attention) order
	desc    bool
	marks   map[string]bool // by row identity (row.ID)
	// chosen: the person put the cursor on a row below the top. A re-sort or a re-filter
	// keeps the chosen row and otherwise starts at the top; a new snapshot always keeps the
	// selected row (setRows).
	chosen bool
	// hint is what the digest knows of the rows (widest cells, rows carried over), used
	// while those are the rows.
	hint rowsHint
	// order is every row's index in the chosen sort, for the rows, column and direction in
	// orderFor; a new list re-sorts only its new rows into it (carryOrder).
	order    []int
	orderFor orderKey
	carried  int // how many times carryOrder carried the order
}

// orderKey names what an order was sorted for.
type orderKey struct {
	first **row
	n     int
	title string
	desc  bool
}

// rowsHint is what the digest knows of a list of rows (first is its first row, n its
// length: the hint holds for that list only): the widest value of each cell index, and —
// when the list was merged from the one before it (prev, prevN) — the place in that list of
// each row carried over (from; -1 for a new row; nil: every row at its place).
type rowsHint struct {
	first  **row
	n      int
	widest []int
	prev   uintptr // rowAddr of the list before's first row (the hint does not keep it alive)
	prevN  int
	from   []int32
}

// widestCell returns the widest value of cell i of the rows, when the hint holds for them.
func (t *table) widestCell(i int) (int, bool) {
	if t.hint.widest == nil {
		return 0, false
	}
	h := t.hint
	if h.n == 0 || h.n != len(t.rows) || h.first != &t.rows[0] {
		return 0, false
	}
	if i < len(h.widest) {
		return h.widest[i], true
	}
	return 0, true
}

func newTable(cols []column) table {
	for i := range cols {
		if cols[i].Idx == 0 && i > 0 && !cols[i].placed {
			cols[i].Idx = i
		}
	}
	return table{all: cols, cols: cols, sortCol: -1, marks: map[string]bool{}}
}

// setRows replaces the rows. The selection stays on the same row (by key, else by identity)
// wherever it moved — the top row too: a row that arrives above it never takes the cursor,
// so a key pressed next acts on the row that was looked at. When that row left, the cursor
// stays at its place, on its neighbour, and setRows returns the row's title. Marks of rows
// that left are dropped.
func (t *table) setRows(rows []*row) (gone string) {
	var selKey, selID, selTitle string
	if r := t.selected(); r != nil {
		selKey, selID, selTitle = r.Key, r.ID, r.Title
	}
	var was orderKey
	if len(t.rows) > 0 {
		was = orderKey{first: &t.rows[0], n: len(t.rows)}
	}
	t.rows = rows
	if len(t.marks) > 0 {
		ids := make(map[string]bool, len(rows))
		for i := range rows {
			ids[rows[i].ID] = true
		}
		for k := range t.marks {
			if !ids[k] {
				delete(t.marks, k)
			}
		}
	}
	at := t.cursor
	t.relayout()
	if !t.carryOrder(was) {
		t.orderFor = orderKey{} // sorted whole by rebuild
	}
	if !t.rebuild(selKey, selID) && selKey != "" {
		t.cursor = at
		t.clamp()
		return selTitle
	}
	return ""
}

// rebuild recomputes the filtered and sorted view and puts the cursor on the row with key
// (else the one with identity id); it reports whether it found one.
func (t *table) rebuild(key, id string) bool {
	t.view = t.view[:0]
	terms := strings.Fields(strings.ToLower(t.filter))
	if cmpf, k := t.sorter(); cmpf == nil {
		for i := range t.rows {
			if fuzzyAll(t.rows[i].Search, terms) {
				t.view = append(t.view, i)
			}
		}
	} else {
		if t.orderFor != k {
			t.order = make([]int, len(t.rows))
			for i := range t.order {
				t.order[i] = i
			}
			slices.SortFunc(t.order, cmpf)
			t.orderFor = k
		}
		t.view = t.view[:0]
		for _, i := range t.order {
			if fuzzyAll(t.rows[i].Search, terms) {
				t.view = append(t.view, i)
			}
		}
	}
	found := false
	byID := -1
	if key == "" && id == "" {
		t.cursor = 0
	}
	for i, ri := range t.view {
		if key != "" && t.rows[ri].Key == key {
			t.cursor, found = i, true
			break
		}
		if byID < 0 && id != "" && t.rows[ri].ID == id {
			byID = i
		}
	}
	if !found && byID >= 0 {
		t.cursor, found = byID, true
	}
	t.clamp()
	return found
}

// sorter is the chosen sort's comparison of two rows by index — the column's order (reversed
// when descending), then the rows' own order, as a stable sort gives — and what an order
// sorted by it is for; nil when the rows are in their own (attention) order.
func (t *table) sorter() (func(a, b int) int, orderKey) {
	if t.sortCol < 0 || t.sortCol >= len(t.cols) || t.cols[t.sortCol].Sort == nil {
		return nil, orderKey{}
	}
	less, desc := t.cols[t.sortCol].Sort, t.desc
	k := orderKey{n: len(t.rows), title: t.cols[t.sortCol].Title, desc: desc}
	if len(t.rows) > 0 {
		k.first = &t.rows[0]
	}
	return func(a, b int) int {
		c := less(t.rows[a], t.rows[b])
		if desc {
			c = -c
		}
		if c == 0 {
			c = cmp.Compare(a, b)
		}
		return c
	}, k
}

// carryOrder derives the order of the new rows from the order of the rows they replaced
// (was), when the digest says which rows were carried over: those keep their order (their
// sort values and their relative places are unchanged), and only the new rows are sorted and
// merged in. Otherwise (it reports false) rebuild sorts every row.
func (t *table) carryOrder(was orderKey) bool {
	cmpf, k := t.sorter()
	h := t.hint
	if cmpf == nil || k.first == nil || h.first != k.first || h.n != k.n ||
		h.prev == 0 || h.prev != rowAddr(was.first) || h.prevN != was.n ||
		t.orderFor != (orderKey{first: was.first, n: was.n, title: k.title, desc: k.desc}) ||
		len(t.order) != was.n {
		return false
	}
	newOf := make([]int, was.n)
	var fresh []int
	if h.from == nil {
		for i := range newOf {
			newOf[i] = i
		}
	} else {
		for i := range newOf {
			newOf[i] = -1
		}
		for j, f := range h.from {
			if f >= 0 {
				newOf[f] = j
			} else {
				fresh = append(fresh, j)
			}
		}
	}
	kept := make([]int, 0, k.n)
	for _, i := range t.order {
		if j := newOf[i]; j >= 0 {
			kept = append(kept, j)
		}
	}
	slices.SortFunc(fresh, cmpf)
	order := make([]int, 0, k.n)
	at := 0
	for _, f := range fresh {
		p := at + sort.Search(len(kept)-at, func(i int) bool { return cmpf(f, kept[at+i]) < 0 })
		order = append(append(order, kept[at:p]...), f)
		at = p
	}
	t.order, t.orderFor = append(order, kept[at:]...), k
	t.carried++
	return true
}

// selectKey puts the cursor on the row with key; it reports whether the row is shown.
func (t *table) selectKey(key string) bool {
	for i, ri := range t.view {
		if t.rows[ri].Key == key {
			t.moveTo(i)
			return true
		}
	}
	return false
}

// keep is what the cursor follows through a re-sort or a re-filter: the chosen row (none
// when the cursor is on the top row and was not moved there).
func (t *table) keep() (string, string) {
	if r := t.selected(); r != nil && t.chosen {
		return r.Key, r.ID
	}
	return "", ""
}

func (t *table) setFilter(f string) {
	t.filter = f
	t.rebuild(t.keep())
}

// sortable returns the titles of the columns the rows can be sorted by.
func (t *table) sortable() []string {
	var out []string
	for _, c := range t.cols {
		if c.Sort != nil {
			out = append(out, c.Title)
		}
	}
	return out
}

// cycleSort moves the sort to the next sortable column (then back to attention order).
func (t *table) cycleSort() {
	for i := t.sortCol + 1; i < len(t.cols); i++ {
		if t.cols[i].Sort != nil {
			t.sortCol = i
			t.rebuild(t.keep())
			return
		}
	}
	t.sortCol = -1
	t.rebuild(t.keep())
}

// sortBy sorts by the column titled title; it reports whether one was found.
func (t *table) sortBy(title string) bool {
	for i, c := range t.cols {
		if strings.EqualFold(c.Title, title) && c.Sort != nil {
			t.sortCol = i
			t.rebuild(t.keep())
			return true
		}
	}
	return false
}

func (t *table) reverse() { t.desc = !t.desc; t.rebuild(t.keep()) }

func (t *table) selected() *row {
	if t.cursor < 0 || t.cursor >= len(t.view) {
		return nil
	}
	return t.rows[t.view[t.cursor]]
}

func (t *table) move(d int) { t.moveTo(t.cursor + d) }

func (t *table) moveTo(i int) {
	t.cursor = i
	t.clamp()
	t.chosen = t.cursor > 0
}

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
		if t.marks[r.ID] {
			delete(t.marks, r.ID)
		} else {
			t.marks[r.ID] = true
		}
	}
}

// markAll marks every shown row.
func (t *table) markAll() {
	for _, ri := range t.view {
		t.marks[t.rows[ri].ID] = true
	}
}

// marked returns the marked rows the filter shows, and how many marks it hides.
func (t *table) marked() (shown []*row, hidden int) {
	in := map[string]bool{}
	for _, ri := range t.view {
		if t.marks[t.rows[ri].ID] {
			shown = append(shown, t.rows[ri])
			in[t.rows[ri].ID] = true
		}
	}
	return shown, len(t.marks) - len(in)
}

func (t *table) setSize(w, h int) {
	t.width, t.height = w, max(h-1, 1)
	t.relayout()
	t.clamp()
}

// hidden returns the titles of the columns too narrow a screen drops.
func (t *table) hidden() []string { return t.dropped }
