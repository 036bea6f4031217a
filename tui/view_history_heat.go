package tui

import (
	"fmt"
	"strings"

	"charm.land/lipgloss/v2"

	"steward/history"
)

// heatShades are the cells' block characters by intensity (share of the hottest cell), so
// the map reads without colour (NO_COLOR) too.
var heatShades = []string{"·", "░", "▒", "▓", "█"}

const (
	heatLabelW = 16 // the session column
	heatCellW  = 7  // one item: block, space, count
)

// heatCell draws one cell: its shade, its total, coloured by what dominates it (collisions
// magenta, refusals red, claims only green).
func heatCell(c history.Cell, maxTotal int, selected bool) string {
	n := c.Total()
	lvl := 0
	if n > 0 && maxTotal > 0 {
		lvl = 1 + (n*4-1)/maxTotal
		lvl = min(lvl, 4)
	}
	txt := heatShades[lvl] + " "
	if n > 0 {
		txt += fmt.Sprintf("%d", n)
	}
	txt = fmt.Sprintf("%-*s", heatCellW-1, txt)
	s := lipgloss.NewStyle()
	switch {
	case c.Collisions > 0:
		s = s.Foreground(colMagenta).Bold(true)
	case c.Refusals > 0:
		s = s.Foreground(colRed)
	case c.Claims > 0:
		s = s.Foreground(colGreen)
	default:
		s = s.Foreground(colGrey)
	}
	if selected {
		return "[" + s.Reverse(true).Render(txt) + "]"
	}
	return " " + s.Render(txt) + " "
}

// heatLines draws the heatmap in w × ht cells, scrolled so the selected cell shows.
func heatLines(hm history.Heat, hs, hi, w, ht int) []string {
	out := []string{fmt.Sprintf("Contention %s – %s · %d sessions × %d items · cell = claims + refused + collisions",
		hms(hm.From), hms(hm.To), len(hm.Sessions), len(hm.Items))}
	if len(hm.Sessions) == 0 {
		out = append(out, "  no claim, refusal or collision recorded in this window (see the gaps below)")
		return append(out, heatGapLines(hm)...)
	}
	cols := max((w-heatLabelW)/(heatCellW+1), 1)
	rows := max(ht-8, 1)
	c0 := max(0, hi-cols+1)
	r0 := max(0, hs-rows+1)
	c1 := min(len(hm.Items), c0+cols)
	r1 := min(len(hm.Sessions), r0+rows)
	var head strings.Builder
	head.WriteString(fmt.Sprintf("%-*s", heatLabelW, "session \\ item"))
	for i := c0; i < c1; i++ {
		head.WriteString(fmt.Sprintf(" %-*s", heatCellW, truncate(fmt.Sprintf("#%d", hm.Items[i].Number), heatCellW)))
	}
	out = append(out, st.colHead.Render(head.String()))
	for s := r0; s < r1; s++ {
		var b strings.Builder
		b.WriteString(fmt.Sprintf("%-*s", heatLabelW, truncate(line(hm.Sessions[s]), heatLabelW-1)))
		for i := c0; i < c1; i++ {
			b.WriteString(heatCell(hm.Cells[s][i], hm.Max, s == hs && i == hi))
		}
		out = append(out, b.String())
	}
	if more := len(hm.Sessions) - r1 + r0; more > 0 || c1-c0 < len(hm.Items) {
		out = append(out, st.dim.Render(fmt.Sprintf("  showing sessions %d–%d of %d, items %d–%d of %d (move to scroll)",
			r0+1, r1, len(hm.Sessions), c0+1, c1, len(hm.Items))))
	}
	c := hm.Cells[hs][hi]
	out = append(out, fmt.Sprintf("%s × %s: %d claims, %d refused, %d collisions · enter: its timeline",
		line(hm.Sessions[hs]), line(hm.Items[hi].String()), c.Claims, c.Refusals, c.Collisions))
	out = append(
		out,
		st.dim.Render(
			"shade by share of the hottest cell ("+fmt.Sprint(
				hm.Max,
			)+"): · none ░ ▒ ▓ █ · colour: collisions, refused, claims only · hottest items and most refused sessions first",
		),
	)
	return append(out, heatGapLines(hm)...)
}

func heatGapLines(hm history.Heat) []string {
	var lost []string
	for _, g := range hm.Gaps {
		if g.Kind != history.GapLimit {
			lost = append(lost, line(g.String()))
		}
	}
	if len(lost) == 0 {
		return nil
	}
	return append([]string{st.warn.Render("Gaps:")}, prefixAll("  ", lost)...)
}

func prefixAll(p string, ss []string) []string {
	for i := range ss {
		ss[i] = p + ss[i]
	}
	return ss
}
