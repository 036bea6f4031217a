package termsafe

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// Characters whose width steward and a terminal may disagree on are drawn as one StandIn
// each; text of certain width is kept as is.
func TestCellsStandIn(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, in, want string }{
		{"ascii", "bot-a", "bot-a"},
		{"latin-1", "José Müller", "José Müller"},
		{"cjk", "日本語", "日本語"},
		{"hangul syllables", "한국어", "한국어"},
		{"decomposed accent", "Jose\u0301", "Jose\u0301"},
		{"thai with marks", "กิน", "กิน"},
		{"emoji wide", "ok 😀", "ok 😀"},
		{"text heart", "❤", "❤"},
		{"soft hyphen", "claim\u00adant", "claim" + StandIn + "ant"},
		{"zero-width space", "ad\u200bmin", "ad" + StandIn + "min"},
		{"word joiner", "a\u2060b", "a" + StandIn + "b"},
		{"bom", "\ufeffx", StandIn + "x"},
		{"emoji with VS16", "bot❤️x", "bot" + StandIn + "x"},
		{"ZWJ flag", "🏳️‍🌈 team", StandIn + " team"},
		{"ZWJ family", "👨‍👩‍👧", StandIn},
		{"skin tone", "👍🏽!", StandIn + "!"},
		{"flag", "🇺🇸", StandIn},
		{"lone regional indicator", "\U0001F1FA", StandIn},
		{"keycap", "1️⃣", StandIn},
		{"hangul filler U+1160", "a\u1160b", "a" + StandIn + "b"},
		{"conjoining jamo", "\u1100\u1161\u11a8", StandIn},
		{"lone combining mark", "\u0301x", StandIn + "x"},
		{"variation selector alone", "\ufe0f", StandIn},
		{"private use", "\ue0b0", StandIn},
		{"tag characters", "\U000E0041", StandIn},
		{"line separator", "a\u2028b", "a" + StandIn + "b"},
		{"devanagari spacing mark", "हि", StandIn},
		{"devanagari conjunct", "न्ध!", StandIn + "!"},
		{"virama then space", "न् x", "न् x"},
		{"thai sara am (a letter that attaches)", "0ำ!", StandIn + "!"},
		{"lao sara am", "ກຳ", StandIn},
		{"prepend joins what follows", "ൎകx", StandIn + "x"},
		{"stand-in is stable", StandIn, StandIn},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Line(tc.in)
			if got != tc.want {
				t.Fatalf("Line(%q) = %q, want %q", tc.in, got, tc.want)
			}
			if g, wc := ansi.StringWidth(got), ansi.StringWidthWc(got); g != wc {
				t.Fatalf("%q: %d cells by graphemes, %d by wcwidth", got, g, wc)
			}
		})
	}
}

// Editable keeps what a person typed (it will be posted); Cell draws it one rune a cell.
func TestEditableKeepsCellDraws(t *testing.T) {
	in := "yes ❤️ \x1b]0;t\x07\u00ad"
	if got := Editable(in); got != "yes ❤️ \u00ad" {
		t.Fatalf("Editable = %q", got)
	}
	var b strings.Builder
	for _, r := range Editable(in) {
		b.WriteString(Cell(r))
	}
	if got, want := b.String(), "yes ❤"+StandIn+" "+StandIn; got != want {
		t.Fatalf("drawn %q, want %q", got, want)
	}
}

// FuzzCells: whatever the input, every drawn string measures the same by both width
// methods, and holds no control character.
func FuzzCells(f *testing.F) {
	for _, s := range []string{"🏳️‍🌈", "a\u00adb", "\u1100\u1160", "e\u0301\u0301", "🇺🇸🇺", "\u200d\u200d", "x\ufe0f", "हिन्दी"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, out := range []string{Line(s), Text(s)} {
			for _, l := range strings.Split(out, "\n") {
				if g, wc := ansi.StringWidth(l), ansi.StringWidthWc(l); g != wc {
					t.Fatalf("%q -> %q: %d cells by graphemes, %d by wcwidth", s, l, g, wc)
				}
			}
			if hostile(out) || !utf8.ValidString(out) {
				t.Fatalf("%q -> %q", s, out)
			}
		}
	})
}
