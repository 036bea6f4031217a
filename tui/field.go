package tui

import (
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"steward/termsafe"
)

// field is a one-line text field — the filter, the palette's query, the typed confirmation
// phrase, a reason: bubbles' textinput, with its keys taken from the keymap (LineKeys) and
// every other binding of its own off, no blinking cursor (frames are deterministic), and
// what is typed or pasted made one safe line first (termsafe.Line). sel marks the whole
// value selected: the next typed text replaces it (a filter reopened with /).
type field struct {
	keys LineKeys
	ti   textinput.Model
	sel  bool
}

// fieldStandIn stands for termsafe.StandIn inside the textinput, whose input sanitiser
// drops U+FFFD; the field's value and view give it back as StandIn (both are one cell).
const fieldStandIn = "\uFFFC"

func newField(keys LineKeys, limit int) field {
	ti := textinput.New()
	ti.Prompt = ""
	ti.CharLimit = limit
	ti.KeyMap = textinput.KeyMap{
		DeleteCharacterBackward: keys.DeleteBack,
		DeleteWordBackward:      keys.DeleteWord,
		DeleteBeforeCursor:      keys.ClearLine,
		DeleteCharacterForward:  keys.DeleteForward,
		CharacterBackward:       keys.Left,
		CharacterForward:        keys.Right,
		LineStart:               keys.Start,
		LineEnd:                 keys.End,
	}
	s := ti.Styles()
	s.Cursor.Blink = false
	s.Cursor.Color = nil // reversed, in the terminal's own colours
	s.Focused.Text = st.field
	s.Focused.Prompt = lipgloss.NewStyle()
	ti.SetStyles(s)
	ti.Focus()
	return field{keys: keys, ti: ti}
}

// input applies a key or a paste to the field and reports whether the value changed.
func (f *field) input(msg tea.Msg) bool {
	switch m := msg.(type) {
	case tea.PasteMsg:
		m.Content = fieldText(m.Content)
		if m.Content == "" {
			return false
		}
		f.replaceSelected()
		msg = m
	case tea.KeyPressMsg:
		switch {
		case m.Text != "" && m.Mod&(tea.ModCtrl|tea.ModAlt) == 0:
			m.Text = fieldText(m.Text)
			if m.Text == "" {
				return false
			}
			f.replaceSelected()
			msg = m
		case f.sel && key.Matches(m, f.keys.DeleteBack, f.keys.DeleteWord, f.keys.ClearLine):
			f.set("") // a selected value goes whole
			return true
		default:
			f.sel = false
		}
	default:
		return false
	}
	before := f.ti.Value()
	f.ti, _ = f.ti.Update(msg) // a static cursor: no blink to schedule
	return f.ti.Value() != before
}

// replaceSelected empties a selected value before typing replaces it.
func (f *field) replaceSelected() {
	if f.sel {
		f.set("")
	}
}

// fieldText is s as the field holds it: one safe line, its stand-ins the field's own.
func fieldText(s string) string {
	return strings.ReplaceAll(termsafe.Line(s), termsafe.StandIn, fieldStandIn)
}

// String is the value.
func (f *field) String() string {
	return strings.ReplaceAll(f.ti.Value(), fieldStandIn, termsafe.StandIn)
}

// set replaces the value (made safe) and puts the cursor at its end.
func (f *field) set(s string) {
	f.ti.SetValue(fieldText(s))
	f.ti.CursorEnd()
	f.sel = false
}

// selectAll selects the value (when there is one): the next typed text replaces it.
func (f *field) selectAll() { f.sel = f.ti.Value() != "" }

// view draws the field in w cells, highlighted, with its block cursor kept in sight (a
// selected value is drawn reversed: typing replaces it).
func (f *field) view(w int) string {
	if f.sel {
		return st.sel.Render(tail(f.String(), w-1)) + st.field.Render(" ")
	}
	s := strings.ReplaceAll(f.ti.View(), fieldStandIn, termsafe.StandIn)
	cur := ansi.StringWidth(string([]rune(f.ti.Value())[:f.ti.Position()]))
	if total := ansi.StringWidth(s); total > w {
		start := max(cur+1-w, 0)
		s = ansi.Cut(s, start, start+w)
	}
	return s
}

// tail is the end of s that fits in w cells.
func tail(s string, w int) string {
	n := ansi.StringWidth(s)
	if n <= w {
		return s
	}
	return ansi.Cut(s, n-w, n)
}
