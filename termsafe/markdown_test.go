package termsafe

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// Character references that decode to something a drawn string may not hold are shown as
// written; others decode as usual.
func TestMarkdownEscapesHarmfulReferences(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"a &#x1b;]0;t&#7; b", "a &amp;#x1b;]0;t&amp;#7; b"},
		{"&#X1B;[2J", "&amp;#X1B;[2J"},
		{"&#x00001b;", "&amp;#x00001b;"},
		{"&#27;[31m", "&amp;#27;[31m"},
		{"&#0000027;", "&amp;#0000027;"},
		{"&#x9b;2J &#155;", "&amp;#x9b;2J &amp;#155;"},
		{"&#x9d;0;t", "&amp;#x9d;0;t"},
		{"&#x202e;evil &rlm; &lrm;", "&amp;#x202e;evil &amp;rlm; &amp;lrm;"},
		{"&shy; &zwj; &ZeroWidthSpace; &#x1160;", "&amp;shy; &amp;zwj; &amp;ZeroWidthSpace; &amp;#x1160;"},
		{"&#0; &#xd800; &#x110000;", "&amp;#0; &amp;#xd800; &amp;#x110000;"},
		{"&eacute; &amp; &lt;b&gt; &#65; &#x263a; &copy;", "&eacute; &amp; &lt;b&gt; &#65; &#x263a; &copy;"},
		{"&notanentity; & plain", "&notanentity; & plain"},
		{"&#9; &#10;", "&#9; &#10;"},
	} {
		if got := Markdown(tc.in); got != tc.want {
			t.Errorf("Markdown(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := Markdown("raw \x1b]8;;http://evil\x07x\x1b]8;;\x07 \u00ad"); got != "raw x "+StandIn {
		t.Errorf("raw sequences: %q", got)
	}
}

// Styled keeps a renderer's colours and drops every other sequence: an OSC 8 hyperlink the
// renderer made from an external target, and whatever it decoded from references.
func TestStyledKeepsOnlySGR(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, in, want string }{
		{"colours kept", "\x1b[38;5;252mtext\x1b[m \x1b[1;4mb\x1b[22m", "\x1b[38;5;252mtext\x1b[m \x1b[1;4mb\x1b[22m"},
		{"colon sgr kept", "\x1b[38:2::1:2:3mx\x1b[0m", "\x1b[38:2::1:2:3mx\x1b[0m"},
		{"osc 8 dropped", "\x1b]8;id=1;https://evil.example\x07\x1b[35mgood\x1b[m\x1b]8;;\x07", "\x1b[35mgood\x1b[m"},
		{"osc 8 ST", "\x1b]8;;https://e\x1b\\x\x1b]8;;\x1b\\", "x"},
		{"osc 0 and 52", "a\x1b]0;t\x07b\x1b]52;c;eA==\x07c", "abc"},
		{"dcs apc pm sos", "a\x1bPq\x1b\\b\x1b_G\x1b\\c\x1b^p\x1b\\d\x1bXs\x1b\\e", "abcde"},
		{"csi not sgr", "a\x1b[2Jb\x1b[10;1Hc\x1b[?1049hd\x1b[>4me", "abcde"},
		{"private sgr-looking", "a\x1b[?25mb\x1b[>1mc", "abc"},
		{"c1", "a\u009b2Jb\u009d0;t\u009cc\u0090q\u009cd", "abcd"},
		{"controls", "a\x07b\x08c\rd\x00e\x7ff\ng", "abc def\ng"},
		{"bidi", "a\u202eb\u2066c", "abc"},
		{"width", "\x1b[1mheart❤️\x1b[m", "\x1b[1mheart" + StandIn + "\x1b[m"},
		{"esc at end", "x\x1b", "x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Styled(tc.in); got != tc.want {
				t.Errorf("Styled(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// onlySGR reports whether s holds no escape sequence but SGR and no control but newline.
func onlySGR(s string) bool {
	for i := 0; i < len(s); {
		if s[i] == 0x1b {
			j := i + 2
			if j > len(s) || s[i+1] != '[' {
				return false
			}
			for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == ';' || s[j] == ':') {
				j++
			}
			if j >= len(s) || s[j] != 'm' {
				return false
			}
			i = j + 1
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r < 0x20 && r != '\n' || r == 0x7f || r >= 0x80 && r <= 0x9f || isBidi(r) {
			return false
		}
		i += n
	}
	return true
}

// FuzzStyled: whatever a renderer writes, what is drawn holds only SGR styling and text.
func FuzzStyled(f *testing.F) {
	for _, s := range []string{"\x1b[31mx\x1b[m", "\x1b]8;;u\x07t\x1b]8;;\x07", "\x1b[2J", "\u009b1m", "\x1bP\x1b\\", "\x1b[", "\x1b]", "a\x1b[1;2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Styled(s)
		if !onlySGR(out) || !utf8.ValidString(out) {
			t.Fatalf("Styled(%q) = %q", s, out)
		}
		if strings.Contains(out, "\x1b]") {
			t.Fatalf("an OSC survived: %q", out)
		}
	})
}

// FuzzMarkdown: no character reference left in the output decodes to a control, bidi or
// uncertain-width character.
func FuzzMarkdown(f *testing.F) {
	for _, s := range []string{"&#x1b;", "&#27;", "&rlm;", "&shy;", "&#x9b;", "&#xD800;", "&amp;#27;", "&&#27;;"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Markdown(s)
		for _, m := range charRef.FindAllStringIndex(out, -1) {
			ref := out[m[0]:m[1]]
			if m[0] >= 4 && out[m[0]-4:m[0]] == "&amp" {
				continue
			}
			if harmfulRef(ref) {
				t.Fatalf("Markdown(%q) = %q keeps %q", s, out, ref)
			}
		}
	})
}
