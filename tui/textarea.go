package tui

import (
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"

	"steward/termsafe"
)

// answerArea is the answer editor's text area: bubbles' textarea (soft wrap, cell widths,
// delete-forward, word moves, memoised wrapping) holding what is drawn, and beside it the
// text as typed, which is what will be posted.
//
// What is drawn is the typed text rune by rune through termsafe.Cell: a rune of uncertain
// width is one U+FFFD, one rune for one rune, so the textarea's measures, wraps and cursor
// agree with the terminal's. (Inside the textarea it is U+FFFC, which
// its input sanitiser keeps; View draws it as U+FFFD.) Typed and pasted text passes through
// termsafe.Editable first (no control sequence; kept otherwise as written). After each edit
// the typed text follows the drawn one: the edit is the stretch between the unchanged start
// and end around the cursor, and what it inserted is the input's own runes.
type answerArea struct {
	ta    textarea.Model
	typed []rune
}

// maxAnswer bounds an answer, in runes (the core refuses more than its own limit).
const maxAnswer = 60000

func newAnswerArea(text string) *answerArea {
	ta := textarea.New()
	ta.ShowLineNumbers = false
	ta.Prompt = ""
	ta.CharLimit = maxAnswer
	ta.MaxHeight = 0
	km := ta.KeyMap
	// The clipboard keys read and write the system clipboard outside a command, and the
	// case and transpose keys change what is drawn in ways that are not the typed runes':
	// they are off. A paste arrives from the terminal (bracketed paste) instead.
	for _, b := range []*key.Binding{&km.Paste, &km.CopySelection, &km.UppercaseWordForward, &km.LowercaseWordForward,
		&km.CapitalizeWordForward, &km.TransposeCharacterBackward} {
		b.SetEnabled(false)
	}
	ta.KeyMap = km
	s := ta.Styles()
	s.Cursor.Blink = false // frames are deterministic
	s.Focused.CursorLine = s.Focused.Text
	ta.SetStyles(s)
	ta.Focus()
	a := &answerArea{ta: ta}
	if text != "" {
		a.typed = []rune(termsafe.Editable(text))
		a.ta.SetValue(drawnText(a.typed))
	}
	return a
}

// Value is the answer as typed.
func (a *answerArea) Value() string { return string(a.typed) }

// SetSize sets the drawn width and height.
func (a *answerArea) SetSize(w, h int) {
	if a.ta.Width() != w {
		a.ta.SetWidth(w)
	}
	if a.ta.Height() != h {
		a.ta.SetHeight(h)
	}
}

// View draws the text area.
func (a *answerArea) View() string {
	return strings.ReplaceAll(a.ta.View(), areaStandIn, termsafe.StandIn)
}

// Update applies a key or a paste. Text the key or paste inserts is made Editable, given to
// the textarea in its drawn form, and kept as typed.
func (a *answerArea) Update(msg tea.Msg) {
	var in []rune
	switch m := msg.(type) {
	case tea.PasteMsg:
		in = []rune(termsafe.Editable(m.Content))
		msg = tea.PasteMsg{Content: drawnText(in)}
	case tea.KeyPressMsg:
		if m.Text != "" {
			in = []rune(termsafe.Editable(m.Text))
			if len(in) == 0 {
				return // nothing but control characters
			}
			m.Text = drawnText(in)
			msg = m
		}
	}
	before := a.ta.Value()
	cb := a.offset()
	a.ta, _ = a.ta.Update(msg)
	after := a.ta.Value()
	if after == before {
		return
	}
	a.follow([]rune(before), []rune(after), cb, a.offset(), in)
}

// offset is the cursor's position in the drawn text, in runes.
func (a *answerArea) offset() int {
	v := a.ta.Value()
	row, col := a.ta.Line(), a.ta.Column()
	n := 0
	for i, l := range strings.Split(v, "\n") {
		if i == row {
			return n + min(col, len([]rune(l)))
		}
		n += len([]rune(l)) + 1
	}
	return n
}

// follow makes the typed text follow an edit of the drawn text from d to d2 (cursor cb
// before, ca after; in the inserted input as typed). Everything before the edit and after
// it is unchanged, rune for rune; the edit spans the cursor's positions.
func (a *answerArea) follow(d, d2 []rune, cb, ca int, in []rune) {
	lo := 0
	for lo < len(d) && lo < len(d2) && d[lo] == d2[lo] {
		lo++
	}
	lo = min(lo, cb, ca)
	s := 0
	for s < len(d)-lo && s < len(d2)-lo && d[len(d)-1-s] == d2[len(d2)-1-s] &&
		len(d)-s > cb && len(d2)-s > ca {
		s++
	}
	inserted := d2[lo : len(d2)-s]
	raw := make([]rune, len(inserted))
	copy(raw, inserted)
	// The inserted runes come from the input: take them as typed where they match its drawn
	// form (a paste the char limit cut is a prefix of it).
	drawnIn := []rune(drawnText(in))
	for i := range raw {
		if i < len(drawnIn) && drawnIn[i] == raw[i] {
			raw[i] = in[i]
		}
	}
	next := make([]rune, 0, lo+len(raw)+s)
	next = append(next, a.typed[:lo]...)
	next = append(next, raw...)
	next = append(next, a.typed[len(a.typed)-s:]...)
	a.typed = next
}

// areaStandIn stands for termsafe.StandIn inside the textarea, whose input sanitiser drops
// U+FFFD; View draws it as StandIn (both are one cell).
const areaStandIn = "\uFFFC"

// drawnText is how typed text is held in the textarea: every rune through termsafe.Cell
// (its stand-in as areaStandIn).
func drawnText(rs []rune) string {
	var b strings.Builder
	for _, r := range rs {
		c := termsafe.Cell(r)
		if c == termsafe.StandIn {
			c = areaStandIn
		}
		b.WriteString(c)
	}
	return b.String()
}
