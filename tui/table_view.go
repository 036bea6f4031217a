package tui

import (
	"strings"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"steward/termsafe"
)

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
		r := t.rows[t.view[vi]]
		b.WriteByte('\n')
		b.WriteString(t.renderRow(r, vi == t.cursor, now))
	}
	return b.String()
}

func (t *table) renderRow(r *row, selected bool, now time.Time) string {
	mark := " "
	if t.marks[r.ID] {
		mark = "•"
	}
	if selected {
		// The selected row is drawn reversed in one piece: one style render per frame.
		var line strings.Builder
		line.WriteString(mark)
		for i, c := range t.cols {
			s, _ := t.cell(r, c, now)
			line.WriteString(pad(t.fit(s, i), t.widths[i]))
			if i < len(t.cols)-1 {
				line.WriteByte(' ')
			}
		}
		return st.bold.Render("▌") + st.sel.Render(line.String())
	}
	var b strings.Builder
	b.WriteByte(' ')
	if mark != " " {
		b.WriteString(st.mark.Render(mark))
	} else {
		b.WriteByte(' ')
	}
	for i, c := range t.cols {
		s, style := t.cell(r, c, now)
		if style != nil {
			b.WriteString(style.Render(pad(t.fit(s, i), t.widths[i])))
		} else {
			b.WriteString(pad(t.fit(s, i), t.widths[i]))
		}
		if i < len(t.cols)-1 {
			b.WriteByte(' ')
		}
	}
	return b.String()
}

// cell is a cell's text and its style (nil: plain).
func (t *table) cell(r *row, c column, now time.Time) (string, *lipgloss.Style) {
	if c.Cell != nil {
		s, style := c.Cell(r, now)
		return s, &style
	}
	if c.Idx < len(r.Cells) {
		return r.Cells[c.Idx], nil
	}
	return "", nil
}

// fit cuts s to the width of shown column i: in the middle for an eliding column (the
// shared prefix goes first, the distinguishing tail stays), else at the end.
func (t *table) fit(s string, i int) string {
	w := t.widths[i]
	if ansi.StringWidth(s) <= w {
		return s
	}
	if t.cols[i].Elide {
		return elideMiddle(s, w, t.prefix[i])
	}
	if sep := t.cols[i].Tail; sep != "" {
		return keepTail(s, w, sep)
	}
	return truncate(s, w)
}

// keepTail cuts s to w cells before its last sep, so that what follows it (the action of
// "what → action") stays whole: "active-lease-p… → lease.reclaim-expired". A tail too long
// for that leaves the head a third of the width and is cut at its end; in a very narrow
// cell only the tail is drawn.
func keepTail(s string, w int, sep string) string {
	at := strings.LastIndex(s, sep)
	if at < 0 {
		return truncate(s, w)
	}
	head, tail := s[:at], s[at:]
	room := w - ansi.StringWidth(tail)
	if room < 0 {
		room = min(ansi.StringWidth(head), w/3)
	}
	if room < 4 {
		return truncate(strings.TrimLeft(tail, " "), w)
	}
	head = truncate(head, room)
	return head + truncate(tail, w-ansi.StringWidth(head))
}

// elideMiddle cuts s to w cells with one ellipsis in the middle. prefix is the width of a
// prefix s shares with the other values of its column: as much of it as needed is elided so
// that the rest — what tells s apart — stays whole when it fits.
func elideMiddle(s string, w, prefix int) string {
	n := ansi.StringWidth(s)
	if n <= w {
		return s
	}
	if w < 4 {
		return truncate(s, w)
	}
	distinct := n - prefix
	head := w / 2
	if prefix > 0 {
		head = max(min(prefix, w-1-distinct), 2)
	}
	head = min(head, w-2)
	tail := w - 1 - head
	return ansi.Cut(s, 0, head) + "…" + ansi.Cut(s, n-tail, n)
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
