package termsafe

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

func TestLine(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, in, want string }{
		{"plain", "alice", "alice"},
		{"title OSC BEL", "a\x1b]0;pwned\x07b", "ab"},
		{"title OSC ST", "a\x1b]2;pwned\x1b\\b", "ab"},
		{"clear screen", "x\x1b[2Jy", "xy"},
		{"cursor move", "x\x1b[10;20Hy", "xy"},
		{"sgr colour", "\x1b[31mred\x1b[0m", "red"},
		{"osc52 clipboard", "\x1b]52;c;ZXZpbA==\x07ok", "ok"},
		{"dcs", "a\x1bPq#0;2;0;0;0\x1b\\b", "ab"},
		{"c1 csi", "a\u009b2Jb", "ab"},
		{"c1 osc", "a\u009d0;t\u009cb", "ab"},
		{"bidi override", "abc\u202Edef\u2066g", "abcdefg"},
		{"controls", "a\x00b\x07c\x7fd\re", "abcd e"},
		{"newline tab", "a\nb\tc", "a b c"},
		{"invalid utf8", "a\xffb", "a\uFFFDb"},
		{"lone esc at end", "abc\x1b", "abc"},
		{"wide ok", "日本語", "日本語"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Line(tc.in); got != tc.want {
				t.Errorf("Line(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestTextKeepsNewlines(t *testing.T) {
	if got := Text("a\n\x1b[2Jb\tc"); got != "a\nb c" {
		t.Errorf("Text = %q", got)
	}
}

func TestTruncate(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 10000)
	got := Truncate(long, 20)
	if w := ansi.StringWidth(got); w != 20 || !strings.HasSuffix(got, "…") {
		t.Errorf("Truncate width %d %q", w, got)
	}
	if got := Truncate("日本語日本語", 5); ansi.StringWidth(got) > 5 || !strings.HasSuffix(got, "…") {
		t.Errorf("wide truncate %q", got)
	}
	if got := Truncate("short", 20); got != "short" {
		t.Errorf("short = %q", got)
	}
	if got := Truncate("\x1b]0;x\x07abc", 10); got != "abc" {
		t.Errorf("escape not stripped before truncating: %q", got)
	}
}

// hostile reports whether s still holds anything that could drive a terminal.
func hostile(s string) bool {
	for _, r := range s {
		if r < 0x20 && r != '\n' || r == 0x7F || (r >= 0x80 && r <= 0x9F) || isBidi(r) {
			return true
		}
	}
	return false
}

func FuzzLine(f *testing.F) {
	for _, s := range []string{"a\x1b]0;t\x07", "\x1b[2J", "\u202e", "\xff\xfe", "\x1bP\x1b\\", "\u009b1m"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, out := range []string{Line(s), Text(s)} {
			if hostile(out) {
				t.Fatalf("unsafe output %q from %q", out, s)
			}
			if !utf8.ValidString(out) {
				t.Fatalf("invalid UTF-8 %q from %q", out, s)
			}
		}
		if strings.ContainsRune(Line(s), '\n') {
			t.Fatalf("Line kept a newline")
		}
		if w := ansi.StringWidth(Truncate(s, 7)); w > 7 {
			t.Fatalf("Truncate width %d", w)
		}
	})
}
