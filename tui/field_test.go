package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"steward/termsafe"
)

// The one-line field is bubbles' textinput under the keymap's LineKeys: typing and pastes
// are made one safe line first, the cursor moves, a selected value is replaced whole, the
// limit holds and the view keeps the cursor in sight.
func TestFieldEdits(t *testing.T) {
	km := defaultKeyMap()
	key := func(k string) tea.Msg {
		special := map[string]tea.Key{"left": {Code: tea.KeyLeft}, "right": {Code: tea.KeyRight}, "home": {Code: tea.KeyHome},
			"end": {Code: tea.KeyEnd}, "delete": {Code: tea.KeyDelete}, "backspace": {Code: tea.KeyBackspace}}
		if s, ok := special[k]; ok {
			return tea.KeyPressMsg(s)
		}
		return keyMsg(k)
	}
	for _, tc := range []struct {
		name string
		sel  bool // the value "old" is selected first
		in   []tea.Msg
		want string
	}{
		{"typing", false, typeText("abc"), "abc"},
		{"insert in the middle", false, append(append(typeText("acd"), key("left"), key("left")), typeText("b")...), "abcd"},
		{"home then type", false, append(append(typeText("bc"), key("home")), typeText("a")...), "abc"},
		{"delete forward", false, append(typeText("abxc"), key("left"), key("left"), key("delete")), "abc"},
		{"delete a word", false, append(typeText("one two"), key("ctrl+w")), "one "},
		{"delete before the cursor", false, append(typeText("one two"), key("left"), key("left"), key("left"), key("ctrl+u")), "two"},
		{"paste: one safe line", false, []tea.Msg{tea.PasteMsg{Content: "a\x1b]52;c;eA==\x07b\nc\td"}}, "ab c d"},
		{"typed control sequence", false, []tea.Msg{tea.KeyPressMsg{Code: 'x', Text: "\x1b[2Jx"}}, "x"},
		{"uncertain width kept as one stand-in", false, typeText("ad\u200bmin"), "ad" + termsafe.StandIn + "min"},
		{"typing replaces a selected value", true, typeText("new"), "new"},
		{"backspace takes a selected value whole", true, []tea.Msg{key("backspace")}, ""},
		{"a move keeps a selected value", true, append([]tea.Msg{key("end")}, typeText("!")...), "old!"},
		{"the limit holds", false, typeText(strings.Repeat("x", 30)), strings.Repeat("x", 20)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newField(km.Line, 20)
			if tc.sel {
				f.set("old")
				f.selectAll()
			}
			for _, m := range tc.in {
				f.input(m)
			}
			if got := f.String(); got != tc.want {
				t.Fatalf("value %q, want %q", got, tc.want)
			}
		})
	}
}

func TestFieldViewKeepsTheCursor(t *testing.T) {
	f := newField(defaultKeyMap().Line, 200)
	f.set(strings.Repeat("a", 30) + strings.Repeat("z", 30))
	end := ansi.Strip(f.view(10))
	if ansi.StringWidth(end) != 10 || !strings.HasPrefix(end, "zzzzzzzzz") {
		t.Fatalf("at the end: %q", end)
	}
	f.input(tea.KeyPressMsg{Code: tea.KeyHome})
	start := ansi.Strip(f.view(10))
	if start != strings.Repeat("a", 10) {
		t.Fatalf("at the start: %q", start)
	}
}
