package tui

import (
	tea "charm.land/bubbletea/v2"

	"steward/termsafe"
)

// lineEdit is a one-line text field: the filter, the palette's query and the typed
// confirmation phrase. It has no blinking cursor, so frames are deterministic.
type lineEdit struct {
	value []rune
	limit int
}

// update applies a key to the field and reports whether the key was consumed.
func (e *lineEdit) update(k tea.KeyPressMsg) bool {
	switch k.String() {
	case "backspace", "ctrl+h":
		if len(e.value) > 0 {
			e.value = e.value[:len(e.value)-1]
		}
		return true
	case "ctrl+u":
		e.value = e.value[:0]
		return true
	case "ctrl+w":
		i := len(e.value)
		for i > 0 && e.value[i-1] == ' ' {
			i--
		}
		for i > 0 && e.value[i-1] != ' ' {
			i--
		}
		e.value = e.value[:i]
		return true
	}
	if k.Text == "" || k.Mod&(tea.ModCtrl|tea.ModAlt) != 0 {
		return false
	}
	for _, r := range termsafe.Line(k.Text) {
		if e.limit > 0 && len(e.value) >= e.limit {
			break
		}
		e.value = append(e.value, r)
	}
	return true
}

func (e *lineEdit) String() string { return string(e.value) }

func (e *lineEdit) set(s string) { e.value = []rune(s) }

// view draws the field with a block cursor, cut to w cells from the right end.
func (e *lineEdit) view(w int) string {
	s := string(e.value)
	if w > 1 {
		r := e.value
		for len(r) > 0 && len([]rune(s)) >= w {
			r = r[1:]
			s = string(r)
		}
	}
	return s + st.sel.Render(" ")
}
