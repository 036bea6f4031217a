package tui

import (
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"steward/termsafe"
)

// textEdit is a small multi-line editor for the clarification answer. (bubbles' textarea
// needs github.com/atotto/clipboard, which this module's go.mod does not require; this
// editor has no clipboard and no blinking cursor, so its frames are deterministic.)
type textEdit struct {
	lines    [][]rune
	row, col int
	top      int
	width    int
	height   int
	limit    int // runes, 0: none
}

func newTextEdit() *textEdit { return &textEdit{lines: [][]rune{nil}, limit: 60000} }

// Value returns the text.
func (e *textEdit) Value() string {
	parts := make([]string, len(e.lines))
	for i, l := range e.lines {
		parts[i] = string(l)
	}
	return strings.Join(parts, "\n")
}

func (e *textEdit) size() int {
	n := 0
	for _, l := range e.lines {
		n += len(l) + 1
	}
	return n
}

// insert types s at the cursor; newlines split the line.
func (e *textEdit) insert(s string) {
	for _, r := range termsafe.Editable(s) { // kept as typed: it is what will be posted
		if e.limit > 0 && e.size() >= e.limit {
			return
		}
		if r == '\n' {
			cur := e.lines[e.row]
			rest := append([]rune(nil), cur[e.col:]...)
			e.lines[e.row] = cur[:e.col]
			e.lines = append(e.lines[:e.row+1], append([][]rune{rest}, e.lines[e.row+1:]...)...)
			e.row, e.col = e.row+1, 0
			continue
		}
		l := e.lines[e.row]
		l = append(l[:e.col], append([]rune{r}, l[e.col:]...)...)
		e.lines[e.row] = l
		e.col++
	}
}

func (e *textEdit) backspace() {
	switch {
	case e.col > 0:
		l := e.lines[e.row]
		e.lines[e.row] = append(l[:e.col-1], l[e.col:]...)
		e.col--
	case e.row > 0:
		prev := e.lines[e.row-1]
		e.col = len(prev)
		e.lines[e.row-1] = append(prev, e.lines[e.row]...)
		e.lines = append(e.lines[:e.row], e.lines[e.row+1:]...)
		e.row--
	}
}

// Update applies a key or a paste.
func (e *textEdit) Update(msg tea.Msg) {
	switch m := msg.(type) {
	case tea.PasteMsg:
		e.insert(m.Content)
	case tea.KeyPressMsg:
		switch m.String() {
		case "enter":
			e.insert("\n")
		case "backspace":
			e.backspace()
		case "left":
			if e.col > 0 {
				e.col--
			} else if e.row > 0 {
				e.row--
				e.col = len(e.lines[e.row])
			}
		case "right":
			if e.col < len(e.lines[e.row]) {
				e.col++
			} else if e.row < len(e.lines)-1 {
				e.row, e.col = e.row+1, 0
			}
		case "up":
			if e.row > 0 {
				e.row--
				e.col = min(e.col, len(e.lines[e.row]))
			}
		case "down":
			if e.row < len(e.lines)-1 {
				e.row++
				e.col = min(e.col, len(e.lines[e.row]))
			}
		case "home", "ctrl+a":
			e.col = 0
		case "end", "ctrl+e":
			e.col = len(e.lines[e.row])
		default:
			if m.Text != "" && m.Mod&(tea.ModCtrl|tea.ModAlt) == 0 {
				e.insert(m.Text)
			}
		}
	}
}

// View draws the visible lines, cut to the width, with a block cursor.
func (e *textEdit) View() string {
	h := max(e.height, 1)
	if e.row < e.top {
		e.top = e.row
	}
	if e.row >= e.top+h {
		e.top = e.row - h + 1
	}
	out := make([]string, 0, h)
	for i := e.top; i < len(e.lines) && i < e.top+h; i++ {
		l := e.lines[i]
		if i != e.row {
			out = append(out, ansi.Truncate(drawn(l), e.width, "…"))
			continue
		}
		start := max(e.col-e.width+2, 0)
		vis := l[start:]
		c := e.col - start
		var s string
		if c < len(vis) {
			s = drawn(vis[:c]) + st.sel.Render(drawn(vis[c:c+1])) + drawn(vis[c+1:])
		} else {
			s = drawn(vis) + st.sel.Render(" ")
		}
		out = append(out, ansi.Truncate(s, e.width, "…"))
	}
	for len(out) < h {
		out = append(out, st.dim.Render("~"))
	}
	return strings.Join(out, "\n")
}

// drawn is how runes of the text being edited are drawn: one certain cell (or two) per
// rune, a rune of uncertain width as termsafe.StandIn (termsafe.Cell), so the cursor stays on
// its rune and no cell is left stale.
func drawn(rs []rune) string {
	var b strings.Builder
	for _, r := range rs {
		b.WriteString(termsafe.Cell(r))
	}
	return b.String()
}
