package tui

import (
	"slices"
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// helpView is '?': every binding that applies here, the current view's first, generated
// from the declarations. What is typed filters it (a key, a word of what it does, a group's
// title), and it pages a screen at a time when the screen is too small for it.
type helpView struct {
	sized
	keys   KeyMap
	groups []KeyGroup
	filter field
	scroll pager
	help   help.Model
}

func newHelp(keys KeyMap, groups []KeyGroup) *helpView {
	return &helpView{keys: keys, groups: groups, filter: newField(keys.Line, 40), help: newHelpModel()}
}

func (hv *helpView) bindings() bindings {
	k := hv.keys.Help
	const grp = "Help"
	closeIt := func() intent {
		if hv.filter.String() != "" {
			hv.filter.set("")
			hv.scroll.top()
			return nil
		}
		return closeIntent{}
	}
	return bindings{
		bind(k.Down, grp, false, nil, func() intent { hv.scroll.by(1); return nil }),
		bind(k.Up, grp, false, nil, func() intent { hv.scroll.by(-1); return nil }),
		bind(k.PageDown, grp, true, nil, func() intent { hv.scroll.by(hv.page()); return nil }),
		bind(k.PageUp, grp, true, nil, func() intent { hv.scroll.by(-hv.page()); return nil }),
		bind(k.Close, grp, true, nil, closeIt),
		bind(hv.keys.Global.Help, grp, false, nil, func() intent { return closeIntent{} }),
		typing(hv.keys.Line.DeleteBack, grp, false),
	}
}

// input types the filter; the view goes back to its top when the filter changes.
func (hv *helpView) input(msg tea.Msg) intent {
	if hv.filter.input(msg) {
		hv.scroll.top()
	}
	return nil
}

// page is one screen of help: the lines under the title and above the scroll line.
func (hv *helpView) page() int { return max(hv.h-2, 1) }

// shown is the groups with the bindings the filter matches (all of a group whose title
// matches), in order; every group when the filter is empty.
func (hv *helpView) shown() []KeyGroup {
	q := strings.ToLower(strings.TrimSpace(hv.filter.String()))
	if q == "" {
		return hv.groups
	}
	var out []KeyGroup
	for _, g := range hv.groups {
		if strings.Contains(strings.ToLower(g.Title), q) {
			out = append(out, g)
			continue
		}
		var bs []key.Binding
		for _, b := range g.Bindings {
			h := b.Help()
			if strings.Contains(strings.ToLower(h.Key+" "+h.Desc), q) || slices.Contains(b.Keys(), q) {
				bs = append(bs, b)
			}
		}
		if len(bs) > 0 {
			out = append(out, KeyGroup{Title: g.Title, Bindings: bs})
		}
	}
	return out
}

func (hv *helpView) View() string {
	w, h := hv.w, hv.h
	// Each group is a block: its title over its keys and what they do, drawn by bubbles'
	// help (its full view of one column: disabled keys drop out). Blocks are as wide as the
	// widest allows, as many columns as fit side by side; blocks flow into columns top to
	// bottom, and the whole scrolls when it is taller than the screen.
	groups := hv.shown()
	colW := min(hv.widest(), max(w-2, 20))
	per := max(w/(colW+2), 1)
	var blocks [][]string
	total := 0
	for _, g := range groups {
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
	bw := min(w, max(len(cols)*(colW+2), 40))
	title := st.title.Render("Help — this view's keys first")
	if tip := " · type to filter"; ansi.StringWidth(title+tip) <= bw {
		title += st.dim.Render(tip) // when it fits: the footer's keys say the rest
	}
	if q := hv.filter.String(); q != "" {
		title = st.title.Render("Help — filter: ") + hv.filter.view(max(ansi.StringWidth(q)+1, 8))
		if len(blocks) == 0 {
			out = []string{
				st.dim.Render("no key matches"),
				st.dim.Render(
					hv.keys.Line.DeleteBack.Help().Key + " edits the filter, " + hv.keys.Help.Close.Help().Key + " clears it",
				),
			}
		}
	}
	out = hv.scroll.window(out, h-1, bw, hv.keys.Help.PageDown.Help().Key+" pages")
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
