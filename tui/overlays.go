package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"steward/govern"
)

// answerEditor is where a maintainer writes the answer to a clarification: a text area, a
// Markdown preview of it, then (ctrl+s) the core's own preview in the confirm dialog, which
// opens on top of the editor. Closing it with text in it asks first; an unsent answer is
// kept per item as a draft until it is sent or discarded.
type answerEditor struct {
	keys       KeyMap
	item       *govern.Item
	question   string
	questionID string
	area       *answerArea
	preview    bool
	md         mdCache
	pmd        mdCache
	// light renders the Markdown in the light style (the workbench's theme).
	light bool
}

func newAnswerEditor(keys KeyMap, item *govern.Item, question, questionID, draft string) *answerEditor {
	return &answerEditor{keys: keys, item: item, question: question, questionID: questionID, area: newAnswerArea(draft)}
}

// styled renders the editor's Markdown in the light style when light (the workbench's theme).
func (e *answerEditor) styled(light bool) *answerEditor {
	e.light = light
	return e
}

func (e *answerEditor) bindings() bindings {
	k := e.keys.Editor
	const grp = "Answer editor"
	hasText := func() bool { return strings.TrimSpace(e.area.Value()) != "" }
	closeIt := func() intent {
		if !hasText() {
			return draftIntent{item: e.item.String()}
		}
		return pushIntent{&discardDialog{keys: e.keys, item: e.item.String(), text: e.area.Value()}}
	}
	return bindings{
		bind(k.Preview, grp, true, nil, func() intent { e.preview = !e.preview; return nil }),
		bind(k.Submit, grp, true, onlyIf(hasText, "the answer is empty"), func() intent {
			return answerIntent{item: e.item, question: e.questionID, body: e.area.Value()}
		}),
		bind(k.Close, grp, true, nil, closeIt),
	}
}

func (e *answerEditor) input(msg tea.Msg) intent {
	if !e.preview {
		e.area.Update(msg)
	}
	return nil
}

func (e *answerEditor) View(w, h int) string {
	iw := min(w-4, 110)
	ih := max(h-6, 4)
	var b []string
	b = append(b, st.title.Render(truncate("Answer "+line(e.item.String()), iw)))
	q := strings.Split(e.md.render(e.question, iw, e.light), "\n")
	if len(q) > ih/3 {
		q = append(q[:max(ih/3-1, 1)], st.dim.Render("… (the whole question is in the detail, enter on the row)"))
	}
	b = append(b, q...)
	room := max(ih-len(q)-1, 3)
	if e.preview {
		b = append(b, st.bold.Render("Preview of your answer ("+e.keys.Editor.Preview.Help().Key+" to edit)"))
		out := strings.Split(e.pmd.render(e.area.Value(), iw, e.light), "\n")
		if len(out) > room {
			out = out[:room]
		}
		b = append(b, out...)
	} else {
		e.area.SetSize(iw, room)
		b = append(b, st.bold.Render("Your answer (Markdown)"))
		b = append(b, strings.Split(strings.TrimRight(e.area.View(), "\n"), "\n")...)
	}
	for i := range b {
		b[i] = truncate(b[i], iw)
	}
	return st.box.Width(iw + 4).Render(strings.Join(b, "\n"))
}

// discardDialog asks before the answer editor closes with text in it.
type discardDialog struct {
	keys       KeyMap
	item, text string
}

func (d *discardDialog) bindings() bindings {
	k := d.keys.Discard
	const grp = "Closing the answer editor"
	return bindings{
		bind(k.Keep, grp, true, nil, func() intent { return draftIntent{item: d.item, text: d.text, keep: true} }),
		bind(k.Discard, grp, true, nil, func() intent { return draftIntent{item: d.item} }),
		bind(k.Back, grp, true, nil, func() intent { return closeIntent{} }),
	}
}

func (d *discardDialog) input(tea.Msg) intent { return nil }

func (d *discardDialog) View(w, h int) string {
	iw := min(w-4, 70)
	k := d.keys.Discard
	b := []string{st.title.Render("Close the answer to " + line(d.item) + "?")}
	b = append(b, hang("", fmt.Sprintf("Your answer has %d characters and has not been sent.", len([]rune(d.text))), iw)...)
	b = append(b, "",
		st.bold.Render(k.Keep.Help().Key)+"  "+k.Keep.Help().Desc+" (a opens it again)",
		st.bold.Render(k.Discard.Help().Key)+"  "+k.Discard.Help().Desc,
		st.bold.Render(k.Back.Help().Key)+"  "+k.Back.Help().Desc)
	return st.box.Width(iw + 4).Render(strings.Join(b, "\n"))
}

// paletteEntry is one command of the palette: a binding of the view or a global one (its key
// shown, or why it does nothing now), or a sort.
type paletteEntry struct {
	label, key, why string
	run             func() intent
}

// palette is the ':' command line: a fuzzy list of everything the keys here do, and more.
type palette struct {
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
		return paletteRun{e.run}
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

func (p *palette) View(w, h int) string {
	iw := min(w-4, 80)
	m := p.matches()
	p.cursor = min(p.cursor, max(len(m)-1, 0))
	b := []string{st.title.Render(":") + " " + p.query.view(iw-2), ""}
	show := max(h-6, 3)
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

// helpView is '?': every binding that applies here, the current view's first, generated
// from the declarations; it scrolls when the screen is too small for it.
type helpView struct {
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

func (hv *helpView) input(tea.Msg) intent { return nil }

func (hv *helpView) View(w, h int) string {
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

// paletteRun is a palette entry chosen: the palette closes, then the entry runs.
type paletteRun struct{ run func() intent }

func (paletteRun) isIntent() {}
