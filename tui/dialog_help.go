package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// helpView is '?': every binding that applies here, the current view's first, generated
// from the declarations; it scrolls when the screen is too small for it.
type helpView struct {
	sized
	noInput
	keys   KeyMap
	groups []KeyGroup
	scroll pager
}

func newHelp(keys KeyMap, groups []KeyGroup) *helpView { return &helpView{keys: keys, groups: groups} }

func (hv *helpView) bindings() bindings {
	d := hv.keys.Dialog
	const grp = "Help"
	closeIt := func() intent { return closeIntent{} }
	return bindings{
		bind(d.Down, grp, true, nil, func() intent { hv.scroll.by(1); return nil }),
		bind(d.Up, grp, false, nil, func() intent { hv.scroll.by(-1); return nil }),
		bind(d.ScrollDown, grp, true, nil, func() intent { hv.scroll.by(10); return nil }),
		bind(d.ScrollUp, grp, false, nil, func() intent { hv.scroll.by(-10); return nil }),
		bind(d.Cancel, grp, true, nil, closeIt),
		bind(hv.keys.Global.Help, grp, false, nil, closeIt),
		bind(hv.keys.Global.Quit, grp, false, nil, closeIt),
	}
}

func (hv *helpView) View() string {
	w, h := hv.w, hv.h
	// Columns as wide as the longest entry allows; as many as fit side by side; blocks flow
	// into columns top to bottom, and the whole scrolls when it is taller than the screen.
	const keyW = 12
	colW := 0
	for _, g := range hv.groups {
		colW = max(colW, len(g.Title))
		for _, b := range g.Bindings {
			colW = max(colW, keyW+1+len([]rune(b.Help().Desc)))
		}
	}
	colW = min(colW, max(w-2, 20))
	per := max(w/(colW+2), 1)
	var blocks [][]string
	total := 0
	for _, g := range hv.groups {
		block := []string{st.bold.Render(truncate(g.Title, colW))}
		for _, b := range g.Bindings {
			if !b.Enabled() {
				continue
			}
			for i, l := range hang(fmt.Sprintf("%-*s ", keyW, b.Help().Key), b.Help().Desc, colW) {
				if i == 0 {
					l = st.bold.Render(ansi.Cut(l, 0, keyW)) + ansi.Cut(l, keyW, ansi.StringWidth(l))
				}
				block = append(block, l)
			}
		}
		if len(block) == 1 {
			continue
		}
		block = append(block, "")
		blocks = append(blocks, block)
		total += len(block)
	}
	// Fill columns to an even height, keeping each block whole.
	target := (total + per - 1) / per
	var cols [][]string
	var cur []string
	for _, bl := range blocks {
		if len(cur) > 0 && len(cur)+len(bl) > target && len(cols) < per-1 {
			cols = append(cols, cur)
			cur = nil
		}
		cur = append(cur, bl...)
	}
	cols = append(cols, cur)
	rows := 0
	for _, c := range cols {
		rows = max(rows, len(c))
	}
	var out []string
	for r := 0; r < rows; r++ {
		var ln strings.Builder
		for _, c := range cols {
			cell := ""
			if r < len(c) {
				cell = c[r]
			}
			ln.WriteString(pad(truncate(cell, colW), colW+2))
		}
		out = append(out, strings.TrimRight(ln.String(), " "))
	}
	bw := min(w, len(cols)*(colW+2))
	title := st.title.Render("Help — this view's keys first") + st.dim.Render(" · "+hv.keys.Dialog.Cancel.Help().Key+" closes")
	out = hv.scroll.window(out, h-1, bw, hv.keys.Dialog.ScrollDown.Help().Key)
	for i := range out {
		out[i] = pad(truncate(out[i], bw), bw)
	}
	return pad(truncate(title, bw), bw) + "\n" + strings.Join(out, "\n")
}
