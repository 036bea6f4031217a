package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"steward/govern"
)

// answerEditor is where a maintainer writes the answer to a clarification: a textarea, a
// Markdown preview of it, then (ctrl+s) the core's own preview in the confirm dialog.
type answerEditor struct {
	keys     EditorKeys
	item     *govern.Item
	question string
	ta       *textEdit
	preview  bool
	md       mdCache
}

func newAnswerEditor(keys EditorKeys, item *govern.Item, question string) *answerEditor {
	return &answerEditor{keys: keys, item: item, question: question, ta: newTextEdit()}
}

// paste inserts pasted text into the answer.
func (e *answerEditor) paste(p tea.PasteMsg) {
	if !e.preview {
		e.ta.Update(p)
	}
}

func (e *answerEditor) Update(k tea.KeyPressMsg) any {
	switch {
	case key.Matches(k, e.keys.Cancel):
		return cancelIntent{}
	case key.Matches(k, e.keys.Preview):
		e.preview = !e.preview
	case key.Matches(k, e.keys.Submit):
		if strings.TrimSpace(e.ta.Value()) != "" {
			return answerIntent{item: e.item, body: e.ta.Value()}
		}
	default:
		if !e.preview {
			e.ta.Update(k)
		}
	}
	return nil
}

func (e *answerEditor) View(w, h int) string {
	iw := min(w-4, 110)
	ih := max(h-8, 4)
	var b []string
	b = append(b, st.title.Render(truncate("Answer "+line(e.item.String()), iw)))
	q := strings.Split(e.md.render(e.question, iw), "\n")
	if len(q) > ih/3 {
		q = append(q[:max(ih/3-1, 1)], st.dim.Render("…"))
	}
	b = append(b, q...)
	if e.preview {
		b = append(b, st.bold.Render("Preview of your answer (ctrl+p to edit)"))
		var pm mdCache
		out := strings.Split(pm.render(e.ta.Value(), iw), "\n")
		if len(out) > ih-len(q) {
			out = out[:max(ih-len(q), 1)]
		}
		b = append(b, out...)
	} else {
		e.ta.width = iw
		e.ta.height = max(ih-len(q)-1, 3)
		b = append(b, st.bold.Render("Your answer (Markdown)"), e.ta.View())
	}
	b = append(b, st.dim.Render("ctrl+p preview · ctrl+s ask the core for its preview · esc discard"))
	for i := range b {
		b[i] = truncate(b[i], iw)
	}
	return st.box.Width(iw + 4).Render(strings.Join(b, "\n"))
}

// paletteCmd is one command of the palette.
type paletteCmd struct {
	label string
	page  pageID // for "view …"
	verb  string // view | refresh | help | quit | dismiss | sort | clear-filter | clear-marks | actions
	arg   string
}

// palette is the ':' command line: a fuzzy list of everything the keys do, and more.
type palette struct {
	keys   DialogKeys
	cmds   []paletteCmd
	query  lineEdit
	cursor int
}

func (p *palette) matches() []paletteCmd {
	terms := strings.Fields(strings.ToLower(p.query.String()))
	var out []paletteCmd
	for _, c := range p.cmds {
		if fuzzyAll(strings.ToLower(c.label), terms) {
			out = append(out, c)
		}
	}
	return out
}

func (p *palette) Update(k tea.KeyPressMsg) any {
	switch k.String() {
	case "esc":
		return cancelIntent{}
	case "up", "ctrl+p":
		p.cursor = max(p.cursor-1, 0)
	case "down", "ctrl+n":
		p.cursor++
	case "enter":
		m := p.matches()
		if len(m) > 0 {
			return paletteIntent{m[min(p.cursor, len(m)-1)]}
		}
	default:
		if p.query.update(k) {
			p.cursor = 0
		}
	}
	return nil
}

func (p *palette) View(w, h int) string {
	iw := min(w-4, 70)
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
		b = append(b, truncate(cur+m[i].label, iw))
	}
	if len(m) == 0 {
		b = append(b, st.dim.Render("no command matches"))
	}
	return st.box.Width(iw + 4).Render(strings.Join(b, "\n"))
}

// helpView is '?': every binding that applies here, generated from the keymap; bindings that
// do not apply to the current row are disabled and drop out.
type helpView struct {
	groups []KeyGroup
}

func (hv *helpView) Update(k tea.KeyPressMsg) any {
	if k.String() == "esc" || k.String() == "?" || k.String() == "q" {
		return cancelIntent{}
	}
	return nil
}

func (hv *helpView) View(w, h int) string {
	colW := 36
	var cols [][]string
	var cur []string
	for _, g := range hv.groups {
		block := []string{st.bold.Render(g.Title)}
		for _, b := range g.Bindings {
			if !b.Enabled() {
				continue
			}
			block = append(block, truncate(fmt.Sprintf("%-10s %s", b.Help().Key, b.Help().Desc), colW))
		}
		if len(cur)+len(block) > h-4 && len(cur) > 0 {
			cols = append(cols, cur)
			cur = nil
		}
		cur = append(cur, block...)
		cur = append(cur, "")
	}
	cols = append(cols, cur)
	var out []string
	per := max((w-4)/(colW+2), 1)
	for start := 0; start < len(cols); start += per {
		rows := 0
		for i := start; i < len(cols) && i < start+per; i++ {
			rows = max(rows, len(cols[i]))
		}
		for r := 0; r < rows; r++ {
			var ln strings.Builder
			for i := start; i < len(cols) && i < start+per; i++ {
				cell := ""
				if r < len(cols[i]) {
					cell = cols[i][r]
				}
				ln.WriteString(pad(cell, colW+2))
			}
			out = append(out, strings.TrimRight(ln.String(), " "))
		}
	}
	if len(out) > h-1 {
		out = append(out[:max(h-2, 1)], st.dim.Render("… more in docs/keys.md"))
	}
	bw := min(w, per*(colW+2))
	for i := range out {
		out[i] = pad(truncate(out[i], bw), bw)
	}
	return pad(st.title.Render("Help — esc to close"), bw) + "\n" + strings.Join(out, "\n")
}
