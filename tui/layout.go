package tui

import (
	"github.com/charmbracelet/x/ansi"
)

// Column widths come from the content and the column's priority, so that what tells rows
// apart and what a person acts on are never what is cut:
//
//  1. every column wants its natural width: its widest value (or its Fixed width) and its
//     title, capped at Max;
//  2. if they do not all fit, the prose columns (Grow) give way down to their Min, and a
//     prose column with a Prio is dropped whole before a deciding column (Decides: an
//     orphan's Action, the inbox's "what → action") is drawn narrower than its natural
//     width (or half the screen, when it is wider);
//  3. if that is not enough, whole columns are dropped, the least important first (highest
//     Prio; identity and deciding columns, Prio 0, are never dropped) — the footer names
//     them; a column is shown at its natural width or not at all, never everything cut a
//     little; a deciding column counts at its Min here;
//  4. when only identity and deciding columns are left and they are still too wide, the
//     eliding ones shrink toward their Min, cut in the middle (elideMiddle), keeping the
//     tail that tells their values apart; then the others from the right, the deciding
//     ones last;
//  5. spare width goes first to the deciding columns, up to their natural width (at most
//     half the screen: a very long one then shares with the prose), then to the prose
//     columns.

// gutter is the selection and mark gutter before the first column.
const gutter = 2

// relayout recomputes which columns are shown and their widths, for the current rows and
// width. The sort stays on its column when that column is still shown.
func (t *table) relayout() {
	sortTitle := ""
	if t.sortCol >= 0 && t.sortCol < len(t.cols) {
		sortTitle = t.cols[t.sortCol].Title
	}
	natural := make([]int, len(t.all))
	for i, c := range t.all {
		natural[i] = t.natural(c)
	}
	keep := make([]bool, len(t.all))
	for i := range keep {
		keep[i] = true
	}
	// need is the width of the kept columns, prose at its minimum and the deciding columns
	// at their natural width (full) or their minimum.
	need := func(full bool) int {
		n := gutter - 1
		for i, c := range t.all {
			if !keep[i] {
				continue
			}
			w := natural[i]
			if c.Decides && !full {
				w = min(w, max(c.Min, 1))
			} else if c.Decides {
				w = min(w, max(c.Min, t.width/2))
			} else if c.Grow && !c.Decides {
				w = c.Min
			}
			n += w + 1
		}
		return n
	}
	drop := func(prose bool) bool {
		at, worst := -1, 0
		for i, c := range t.all {
			if keep[i] && c.Prio > 0 && !c.Decides && (!prose || c.Grow) && c.Prio >= worst {
				at, worst = i, c.Prio
			}
		}
		if at < 0 {
			return false
		}
		keep[at] = false
		t.dropped = append(t.dropped, t.all[at].Title)
		return true
	}
	t.dropped = t.dropped[:0]
	// Prose that may go gives way whole to the deciding columns' full width; then the
	// least important columns go until the rest fit at their natural width (prose and
	// deciding columns at their minimum), or only identity and deciding columns are left.
	for need(true) > t.width && drop(true) {
	}
	for need(false) > t.width && drop(false) {
	}
	t.cols = t.cols[:0:0]
	var want []int
	for i, c := range t.all {
		if keep[i] {
			t.cols = append(t.cols, c)
			want = append(want, natural[i])
		}
	}
	t.widths = t.share(want)
	t.prefix = make([]int, len(t.cols))
	for i, c := range t.cols {
		if c.Elide && t.widths[i] < want[i] {
			t.prefix[i] = t.sharedPrefix(c)
		}
	}
	t.sortCol = -1
	for i, c := range t.cols {
		if sortTitle != "" && c.Title == sortTitle {
			t.sortCol = i
		}
	}
}

// share gives the shown columns their widths: each its natural width (prose its minimum);
// when that is too wide (only identity columns are left to drop), the eliding columns shrink
// toward their minimum, then the rest is cut from the right; spare width goes to the prose.
func (t *table) share(want []int) []int {
	w := make([]int, len(t.cols))
	avail := t.width - gutter - (len(t.cols) - 1)
	for i, c := range t.cols {
		w[i] = want[i]
		if c.Decides {
			w[i] = min(want[i], max(c.Min, 1))
		} else if c.Grow {
			w[i] = c.Min
		}
		avail -= w[i]
	}
	for avail < 0 {
		at := -1
		for i, c := range t.cols {
			if c.Elide && w[i] > c.Min && (at < 0 || w[i] > w[at]) {
				at = i
			}
		}
		if at < 0 {
			break
		}
		w[at]--
		avail++
	}
	// Then cut from the right: the other columns first, the deciding ones last.
	for _, decides := range []bool{false, true} {
		for i := len(w) - 1; i >= 0 && avail < 0; i-- {
			if t.cols[i].Decides != decides {
				continue
			}
			if cut := min(-avail, w[i]-3); cut > 0 {
				w[i] -= cut
				avail += cut
			}
		}
	}
	// Spare width: the deciding columns first, up to their natural width (at most half the
	// screen, then they share with the prose), then the prose.
	for i, c := range t.cols {
		if c.Decides && avail > 0 && w[i] < want[i] {
			add := min(avail, min(want[i], max(c.Min, t.width/2))-w[i])
			w[i] += add
			avail -= add
		}
	}
	var grow []int
	for i, c := range t.cols {
		if c.Grow {
			grow = append(grow, i)
		}
	}
	for k, i := range grow {
		if avail <= 0 {
			break
		}
		add := avail / (len(grow) - k)
		w[i] += add
		avail -= add
	}
	return w
}

// natural is the width column c wants: its widest value and its title, within Min and Max.
func (t *table) natural(c column) int {
	n := ansi.StringWidth(c.Title) + 1 // room for the sort arrow
	if c.Fixed > 0 {
		n = max(n, c.Fixed)
	} else if w, ok := t.widestCell(c.Idx); ok {
		n = max(n, w)
	} else {
		for i := range t.rows {
			n = max(n, t.rows[i].width(c.Idx))
		}
	}
	if c.Max > 0 {
		n = min(n, c.Max)
	}
	return max(n, c.Min)
}

// sharedPrefix is the width of the prefix every value of column c shares (0 with fewer than
// two rows).
func (t *table) sharedPrefix(c column) int {
	if len(t.rows) < 2 {
		return 0
	}
	p := t.rows[0].cell(c.Idx)
	for i := 1; i < len(t.rows) && p != ""; i++ {
		s := t.rows[i].cell(c.Idx)
		n := 0
		for n < len(p) && n < len(s) && p[n] == s[n] {
			n++
		}
		p = p[:n]
	}
	return ansi.StringWidth(p)
}
