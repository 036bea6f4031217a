package termsafe

import (
	"html"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// charRef matches an HTML character reference as Markdown decodes it: numeric, in decimal
// or hex, or named.
var charRef = regexp.MustCompile(`&(?:#[xX]([0-9a-fA-F]{1,8})|#([0-9]{1,8})|([A-Za-z][A-Za-z0-9]{1,31}));`)

// Markdown returns external Markdown safe to hand to a renderer: Text, and then every
// character reference that would decode to something Text removes or replaces — a control
// character (&#x1b;, &#27;, &#x9b;), a bidirectional override (&#x202e;, &rlm;), a
// zero-width or uncertain-width character (&shy;, &zwj;, &#x1160;) — is escaped so that the
// reader sees the reference as written instead of what it encodes. Styled must still run
// on the rendered output.
func Markdown(s string) string {
	s = Text(s)
	if !strings.Contains(s, "&") {
		return s
	}
	return charRef.ReplaceAllStringFunc(s, func(ref string) string {
		if harmfulRef(ref) {
			return "&amp;" + ref[1:]
		}
		return ref
	})
}

// harmfulRef reports whether a character reference decodes to a rune a drawn string may
// not hold.
func harmfulRef(ref string) bool {
	m := charRef.FindStringSubmatch(ref)
	var decoded string
	switch {
	case m[1] != "" || m[2] != "":
		base, digits := 16, m[1]
		if m[2] != "" {
			base, digits = 10, m[2]
		}
		v, err := strconv.ParseUint(digits, base, 32)
		if err != nil || v > utf8.MaxRune {
			return true
		}
		// The code point itself, and what HTML's decoding makes of it (C1 numbers map to
		// Windows-1252): both must be harmless.
		decoded = string(rune(v)) + html.UnescapeString(ref)
	default:
		decoded = html.UnescapeString(ref)
		if decoded == ref {
			return false // not an entity a renderer knows: it stays text
		}
	}
	for _, r := range decoded {
		if r == '\t' || r == '\n' {
			continue
		}
		if r == utf8.RuneError || !certainRune(r) {
			return true
		}
	}
	return false
}

// Styled returns a renderer's output safe to draw: the only escape sequences kept are SGR
// (colour and weight: ESC [ digits ; : m), which the renderer writes itself; every other
// sequence — OSC 8 hyperlinks included, as glamour writes them from external link targets,
// OSC 0/52, DCS, APC, cursor and erase CSIs — and every control character but the newline
// is removed, bidirectional overrides too, and the text between the sequences gets the same
// cell rule as Text.
func Styled(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	var run strings.Builder
	flush := func() {
		if run.Len() > 0 {
			b.WriteString(cells(clean(run.String(), true)))
			run.Reset()
		}
	}
	for i := 0; i < len(s); {
		if s[i] == 0x1B {
			n := 1 + skipEscape(s[i+1:])
			if seq := s[i : i+n]; isSGR(seq) {
				flush()
				b.WriteString(seq)
			}
			i += n
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == 0x9B: // C1 CSI: never kept, not even SGR
			i += size + skipCSI(s[i+size:])
			continue
		case r == 0x9D || r == 0x90 || r == 0x98 || r == 0x9E || r == 0x9F:
			i += size + skipString(s[i+size:])
			continue
		}
		run.WriteString(s[i : i+size])
		i += size
	}
	flush()
	return b.String()
}

// isSGR reports whether seq is exactly ESC [ params m with params of digits, ';' and ':'.
func isSGR(seq string) bool {
	if len(seq) < 3 || seq[1] != '[' || seq[len(seq)-1] != 'm' {
		return false
	}
	for i := 2; i < len(seq)-1; i++ {
		if c := seq[i]; (c < '0' || c > '9') && c != ';' && c != ':' {
			return false
		}
	}
	return true
}
