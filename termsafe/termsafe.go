// Package termsafe makes external strings safe to draw on a terminal. Every string that
// comes from a lock file, the control-plane DB or Gitea passes through it before it is
// printed or rendered: escape sequences (CSI, OSC, DCS, APC, PM, SOS), C0 and C1 control
// characters and bidirectional overrides are removed, and invalid UTF-8 becomes U+FFFD, so
// data cannot move the cursor, retitle the window, write the clipboard or reorder text; and
// every character whose width a terminal may not agree on is drawn as one U+FFFD (cells.go),
// so that every drawn cell is where steward thinks it is.
//
// Markdown gets two passes (Markdown before rendering, Styled after): a renderer decodes
// character references (&#x1b;) into the very bytes the first pass removed, and writes
// hyperlinks (OSC 8) of its own from external text.
//
// It is pure and has no dependencies beyond the standard library and a width table. It must
// never keep a sequence it cannot prove harmless.
package termsafe

import (
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// Line returns s as one safe line: newlines and tabs become spaces, and characters of
// uncertain width become StandIn.
func Line(s string) string { return cells(clean(s, false)) }

// Text returns s safe to draw, keeping newlines (tabs become spaces).
func Text(s string) string { return cells(clean(s, true)) }

// Editable returns text a person types or pastes into an editor with control sequences
// removed and everything else kept as written (newlines kept, tabs become spaces): it is
// what will be posted, so no character is replaced. Draw it rune by rune with Cell.
func Editable(s string) string { return clean(s, true) }

// isBidi reports the bidirectional formatting characters that can reorder what is shown.
func isBidi(r rune) bool {
	switch {
	case r >= 0x202A && r <= 0x202E, r >= 0x2066 && r <= 0x2069:
		return true
	case r == 0x200E, r == 0x200F, r == 0x061C:
		return true
	}
	return false
}

func safeRune(r rune) bool {
	return r >= 0x20 && r != 0x7F && (r < 0x80 || r > 0x9F) && !isBidi(r)
}

// clean removes escape sequences and control characters from s.
func clean(s string, keepNL bool) string {
	if isPlain(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size <= 1 {
			b.WriteRune(utf8.RuneError)
			i++
			continue
		}
		switch {
		case r == 0x1B: // ESC: skip the whole sequence
			i += skipEscape(s[i+1:]) + 1
			continue
		case r == 0x9B: // C1 CSI
			i += size + skipCSI(s[i+size:])
			continue
		case r == 0x9D || r == 0x90 || r == 0x98 || r == 0x9E || r == 0x9F: // C1 OSC, DCS, SOS, PM, APC
			i += size + skipString(s[i+size:])
			continue
		case r == '\n' && keepNL:
			b.WriteByte('\n')
		case r == '\n' || r == '\r' || r == '\t':
			b.WriteByte(' ')
		case safeRune(r):
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// isPlain reports whether s is printable ASCII only, the common case, which needs no copy.
func isPlain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7F {
			return false
		}
	}
	return true
}

// skipEscape returns how many bytes after an ESC belong to its sequence.
func skipEscape(s string) int {
	if s == "" {
		return 0
	}
	switch s[0] {
	case '[':
		return 1 + skipCSI(s[1:])
	case ']', 'P', 'X', '^', '_':
		return 1 + skipString(s[1:])
	}
	// Two- or three-byte escapes: intermediates 0x20-0x2F then one final byte.
	n := 0
	for n < len(s) && s[n] >= 0x20 && s[n] <= 0x2F {
		n++
	}
	if n < len(s) && s[n] >= 0x30 && s[n] <= 0x7E {
		n++
	}
	return n
}

// skipCSI skips parameter and intermediate bytes up to and including the final byte.
func skipCSI(s string) int {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 0x40 && c <= 0x7E {
			return i + 1
		} else if c < 0x20 || c > 0x3F && c < 0x40 {
			return i
		}
	}
	return len(s)
}

// skipString skips a control string up to its terminator: BEL, ESC \ or C1 ST.
func skipString(s string) int {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case 0x07:
			return i + 1
		case 0x1B:
			if i+1 < len(s) && s[i+1] == '\\' {
				return i + 2
			}
			return i
		case 0xC2:
			if i+1 < len(s) && s[i+1] == 0x9C {
				return i + 2
			}
		}
	}
	return len(s)
}

// Truncate returns the safe line form of s cut to at most width terminal cells, ending in an
// ellipsis when it cut. Wide characters count as two cells.
func Truncate(s string, width int) string {
	s = Line(s)
	if width <= 0 {
		return ""
	}
	// A safe line never takes more cells than it has bytes (wide characters are at least
	// three bytes long), so a short one needs no width measurement: the common case.
	if len(s) <= width || ansi.StringWidth(s) <= width {
		return s
	}
	return ansi.Truncate(s, width, "…")
}
