package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// scroller shows a window of lines that is too long for its room, and says how much is
// above and below; seen is the furthest line shown so far.
type scroller struct {
	off  int
	seen int
}

// by moves the window by d lines (a page when d is the room).
func (s *scroller) by(d int) { s.off = max(s.off+d, 0) }

// window returns the lines shown in h rows: an indicator line takes a row when there is more
// above or below; hint names the key that scrolls down.
func (s *scroller) window(lines []string, h, w int, hint string) []string {
	h = max(h, 1)
	if len(lines) <= h {
		s.off = 0
		s.seen = max(s.seen, len(lines))
		return lines
	}
	body := max(h-1, 1)
	s.off = min(s.off, len(lines)-body)
	out := append([]string{}, lines[s.off:s.off+body]...)
	s.seen = max(s.seen, s.off+body)
	above, below := s.off, len(lines)-s.off-body
	var ind []string
	if above > 0 {
		ind = append(ind, fmt.Sprintf("↑ %d more", above))
	}
	if below > 0 {
		ind = append(ind, fmt.Sprintf("↓ %d more lines — %s", below, hint))
	} else {
		ind = append(ind, "end")
	}
	return append(out, st.dim.Render(truncate(strings.Join(ind, " · "), w)))
}

// wrapText wraps prose at w cells, breaking long words when it must.
func wrapText(s string, w int) string {
	if w < 1 || ansi.StringWidth(s) <= w {
		return s
	}
	return ansi.Wrap(s, w, "")
}

// hang wraps text at w cells after a prefix; continuation lines are indented by the
// prefix's width.
func hang(prefix, text string, w int) []string {
	pw := ansi.StringWidth(prefix)
	body := strings.Split(wrapText(text, max(w-pw, 10)), "\n")
	out := make([]string, len(body))
	for i, l := range body {
		if i == 0 {
			out[i] = prefix + l
		} else {
			out[i] = strings.Repeat(" ", pw) + l
		}
	}
	return out
}
