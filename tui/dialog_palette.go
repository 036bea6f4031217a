package tui

import (
	"strings"

	tea "charm.land/bubbletea/v2"
)

// paletteEntry is one command of the palette: a binding of the view or a global one (its key
// shown, or why it does nothing now), or a sort.
type paletteEntry struct {
	label, key, why string
	run             func() intent
}

// palette is the ':' command line: a fuzzy list of everything the keys here do, and more.
type palette struct {
	sized
	keys    KeyMap
	entries []paletteEntry
	query   field
	cursor  int
}

func newPalette(keys KeyMap, entries []paletteEntry) *palette {
	return &palette{keys: keys, entries: entries, query: newField(keys.Line, 80)}
}

func (p *palette) matches() []paletteEntry {
	terms := strings.Fields(strings.ToLower(p.query.String()))
	var out []paletteEntry
	for _, c := range p.entries {
		if fuzzyAll(strings.ToLower(c.label+" "+c.key), terms) {
			out = append(out, c)
		}
	}
	return out
}

func (p *palette) bindings() bindings {
	k := p.keys.Palette
	const grp = "Palette"
	run := func() intent {
		m := p.matches()
		if len(m) == 0 {
			return noteIntent{"no command matches " + p.query.String()}
		}
		e := m[min(p.cursor, len(m)-1)]
		if e.why != "" {
			return noteIntent{e.label + ": " + e.why}
		}
		return closeThen{e.run()}
	}
	return bindings{
		bind(k.Up, grp, false, nil, func() intent { p.cursor = max(p.cursor-1, 0); return nil }),
		bind(k.Down, grp, false, nil, func() intent { p.cursor++; return nil }),
		bind(k.Run, grp, true, nil, run),
		bind(k.Close, grp, true, nil, func() intent { return closeIntent{} }),
	}
}

func (p *palette) input(msg tea.Msg) intent {
	if p.query.input(msg) {
		p.cursor = 0
	}
	return nil
}

func (p *palette) View() string {
	iw := p.inner(80)
	m := p.matches()
	p.cursor = min(p.cursor, max(len(m)-1, 0))
	b := []string{st.title.Render(":") + " " + p.query.view(iw-2), ""}
	show := max(p.h-6, 3)
	start := max(p.cursor-show+1, 0)
	for i := start; i < len(m) && i < start+show; i++ {
		cur := "  "
		if i == p.cursor {
			cur = "▸ "
		}
		label := m[i].label
		right := m[i].key
		if m[i].why != "" {
			label = st.dim.Render(label + " — " + m[i].why)
		}
		b = append(b, pad(truncate(cur+label, iw-12), iw-10)+st.bold.Render(truncate(right, 10)))
	}
	if len(m) == 0 {
		b = append(b, st.dim.Render("no command matches"))
	}
	return st.box.Width(iw + 4).Render(strings.Join(b, "\n"))
}
