package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/viewport"
	"github.com/charmbracelet/x/ansi"
)

// pager shows lines in a room that may be too small for them: bubbles' viewport holds the
// lines and the scroll position, and when they do not fit, one line under it says how much
// is above and below and which key scrolls. seen is the furthest line shown so far (the
// confirm dialog counts the targets read from it). Its keys are the owner's bindings (the
// viewport's own keymap is never consulted).
type pager struct {
	vp   viewport.Model
	seen int
}

// by scrolls by d lines (up when d < 0), within the lines last shown.
func (p *pager) by(d int) {
	if d > 0 {
		p.vp.ScrollDown(d)
	} else {
		p.vp.ScrollUp(-d)
	}
}

// offset is the first line shown.
func (p *pager) offset() int { return p.vp.YOffset() }

// top scrolls back to the first line.
func (p *pager) top() { p.vp.GotoTop() }

// window returns what is shown of lines in h rows of w cells: all of them when they fit,
// else a window and the indicator line; hint names the key that scrolls down.
func (p *pager) window(lines []string, h, w int, hint string) []string {
	h = max(h, 1)
	if len(lines) <= h {
		p.vp.GotoTop()
		p.seen = max(p.seen, len(lines))
		return lines
	}
	body := max(h-1, 1)
	p.vp.SetWidth(max(w, 1))
	p.vp.SetHeight(body)
	p.vp.SetContentLines(lines)
	p.vp.SetYOffset(p.vp.YOffset()) // within the new lines
	off := p.vp.YOffset()
	out := strings.Split(p.vp.View(), "\n")
	p.seen = max(p.seen, off+body)
	above, below := off, len(lines)-off-body
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
