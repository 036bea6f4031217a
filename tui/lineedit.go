package tui

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"steward/termsafe"
)

// lineEdit is a one-line text field: the filter, the palette's query, the typed confirmation
// phrase, a reason. Its editing keys come from the keymap (LineKeys); every other key with
// text types. It has no blinking cursor, so frames are deterministic. sel marks the whole
// value selected: the next typed text replaces it (a filter reopened with /).
type lineEdit struct {
	keys  LineKeys
	value []rune
	limit int
	sel   bool
}

// input applies a key or a paste to the field and reports whether the value changed. The
// editing keys (LineKeys) are matched here for fields that declare no bindings of their own.
func (e *lineEdit) input(msg tea.Msg) bool {
	switch m := msg.(type) {
	case tea.PasteMsg:
		return e.insert(m.Content)
	case tea.KeyPressMsg:
		switch {
		case key.Matches(m, e.keys.DeleteBack):
			e.deleteBack()
			return true
		case key.Matches(m, e.keys.DeleteWord):
			e.deleteWord()
			return true
		case key.Matches(m, e.keys.ClearLine):
			e.set("")
			return true
		}
		if m.Text == "" || m.Mod&(tea.ModCtrl|tea.ModAlt) != 0 {
			return false
		}
		return e.insert(m.Text)
	}
	return false
}

// insert types s (made one safe line) at the end, replacing a selected value.
func (e *lineEdit) insert(s string) bool {
	if e.sel {
		e.value, e.sel = e.value[:0], false
	}
	for _, r := range termsafe.Line(s) {
		if e.limit > 0 && len(e.value) >= e.limit {
			break
		}
		e.value = append(e.value, r)
	}
	return true
}

func (e *lineEdit) deleteBack() {
	switch {
	case e.sel:
		e.value, e.sel = e.value[:0], false
	case len(e.value) > 0:
		e.value = e.value[:len(e.value)-1]
	}
}

func (e *lineEdit) deleteWord() {
	if e.sel {
		e.value, e.sel = e.value[:0], false
		return
	}
	i := len(e.value)
	for i > 0 && e.value[i-1] == ' ' {
		i--
	}
	for i > 0 && e.value[i-1] != ' ' {
		i--
	}
	e.value = e.value[:i]
}

func (e *lineEdit) String() string { return string(e.value) }

func (e *lineEdit) set(s string) { e.value, e.sel = []rune(s), false }

// view draws the field cut to w cells from the right end; focused draws it highlighted
// with a block cursor (a selected value reversed: typing replaces it).
func (e *lineEdit) view(w int, focused bool) string {
	r := e.value
	for len(r) > 0 && len(r) >= w {
		r = r[1:]
	}
	s := string(r)
	switch {
	case !focused:
		return s
	case e.sel:
		return st.sel.Render(s) + st.field.Render(" ")
	}
	return st.field.Render(s) + st.sel.Render(" ")
}
