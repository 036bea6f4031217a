package tui

import (
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
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
	help   help.Model
}

func newHelp(keys KeyMap, groups []KeyGroup) *helpView {
	return &helpView{keys: keys, groups: groups, help: newHelpModel()}
}

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
	// Each group is a block: its title over its keys and what they do, drawn by bubbles'
	// help (its full view of one column: disabled keys drop out). Blocks are as wide as the
	// widest allows, as many columns as fit side by side; blocks flow into columns top to
	// bottom, and the whole scrolls when it is taller than the screen.
	colW := min(hv.widest(), max(w-2, 20))
	per := max(w/(colW+2), 1)
	var blocks [][]string
	total := 0
	for _, g := range hv.groups {
		col := helpColumn(hv.help, g.Bindings, colW)
		if len(col) == 0 {
			continue
		}
		block := append([]string{st.bold.Render(truncate(g.Title, colW))}, col...)
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
	title := st.title.Render("Help — this view's keys first")
	if closes := " · " + hv.keys.Dialog.Cancel.Help().Key + " closes"; ansi.StringWidth(title+closes) <= bw {
		title += st.dim.Render(closes) // when it fits: the footer says it too
	}
	out = hv.scroll.window(out, h-1, bw, hv.keys.Dialog.ScrollDown.Help().Key)
	for i := range out {
		out[i] = pad(truncate(out[i], bw), bw)
	}
	return pad(truncate(title, bw), bw) + "\n" + strings.Join(out, "\n")
}

// widest is the width of the widest group: its title, or its widest key and description.
func (hv *helpView) widest() int {
	n := 0
	for _, g := range hv.groups {
		n = max(n, ansi.StringWidth(g.Title), helpKeyWidth(g.Bindings)+1+helpDescWidth(g.Bindings))
	}
	return n
}

// helpColumn is one group's keys and what they do as bubbles' help draws them in one column
// of w cells, the descriptions wrapped to fit (a continuation line is the binding again, with
// no key shown); nil when none of the keys applies.
func helpColumn(hm help.Model, bs []key.Binding, w int) []string {
	keyW := helpKeyWidth(bs)
	var col []key.Binding
	for _, b := range bs {
		if !b.Enabled() {
			continue
		}
		for i, l := range strings.Split(wrapText(b.Help().Desc, max(w-keyW-1, 10)), "\n") {
			line := b
			if i == 0 {
				line.SetHelp(b.Help().Key, l)
			} else {
				line.SetHelp("", l)
			}
			col = append(col, line)
		}
	}
	if len(col) == 0 {
		return nil
	}
	return strings.Split(hm.FullHelpView([][]key.Binding{col}), "\n")
}

// helpKeyWidth is the width of the widest key of the enabled bindings.
func helpKeyWidth(bs []key.Binding) int {
	n := 0
	for _, b := range bs {
		if b.Enabled() {
			n = max(n, ansi.StringWidth(b.Help().Key))
		}
	}
	return n
}

// helpDescWidth is the width of the widest description of the enabled bindings.
func helpDescWidth(bs []key.Binding) int {
	n := 0
	for _, b := range bs {
		if b.Enabled() {
			n = max(n, ansi.StringWidth(b.Help().Desc))
		}
	}
	return n
}

// newHelpModel is bubbles' help in the workbench's styles: keys bold, descriptions dim in
// the footer and plain in help, two spaces between the footer's keys.
func newHelpModel() help.Model {
	hm := help.New()
	hm.ShortSeparator = "  "
	hm.Styles = help.Styles{ShortKey: st.bold, ShortDesc: st.dim, FullKey: st.bold, Ellipsis: st.dim}
	return hm
}
