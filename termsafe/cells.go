package termsafe

import (
	"strings"
	"sync"
	"sync/atomic"
	"unicode"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// StandIn replaces, in what is drawn, a character or sequence whose width on the terminal
// is not certain: U+FFFD, one cell wide — the same mark invalid UTF-8 gets.
const StandIn = "\uFFFD"

// Which characters are drawn as themselves. steward measures text the way lipgloss does
// (grapheme clusters, ansi.StringWidth); terminals measure it their own way, most of them
// rune by rune with a wcwidth table of their own Unicode version. Where the two disagree, a
// row is drawn narrower or wider than steward thinks: the rest of the row shifts, columns
// break, and cells of earlier frames stay on screen (before, a claimant holding
// U+00AD made the Claims view show "Left 29m4557s"). So a cluster is drawn as itself only
// when its width is the same by both measures and not disputed between terminals:
//
//   - one rune of width 1 or 2 by both measures, not a zero-width or format character
//     (U+00AD soft hyphen, U+200B zero-width space, U+2060 word joiner, U+FEFF, tags, …),
//     not a variation selector, not a Hangul medial or final jamo (U+1160 …, width 0, 1 or 2
//     depending on the terminal), not a lone regional indicator, not a private-use glyph
//     (its width is the font's);
//   - or such a rune followed only by non-spacing combining marks (e + U+0301), when both
//     measures still agree.
//
// Everything else — an emoji with VS16 (❤️), a ZWJ sequence (🏳️‍🌈), a skin-tone modifier
// (👍🏽), a flag, a keycap, conjoining jamo, a spacing mark, a mark with nothing to attach
// to — is drawn as one StandIn per cluster. JSON output keeps the text as it was; only what
// is drawn changes. East Asian Ambiguous characters are taken as one cell, as steward's own
// ellipsis and box drawing are: a terminal set to draw them wide misaligns steward anyway.

// cellsPlain reports whether s needs no cluster check: ASCII and Latin-1 letters only.
func cellsPlain(s string) bool {
	for _, r := range s {
		if r >= 0x300 || r == 0xAD {
			return false
		}
	}
	return true
}

// cells replaces every cluster of s whose width is not certain with StandIn. s holds no
// control characters (clean ran first), except newlines, which are kept.
func cells(s string) string {
	if cellsPlain(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		n := clusterLen(s[i:])
		c := s[i : i+n]
		if c == "\n" || certain(c) {
			b.WriteString(c)
		} else {
			b.WriteString(StandIn)
		}
		i += n
	}
	return b.String()
}

// clusterLen returns the length in bytes of the cluster s starts with: a base rune, the
// runes that attach to it, a second regional indicator after a first, and after a zero-width
// joiner the next rune with its own attachments.
func clusterLen(s string) int {
	r, n := utf8.DecodeRuneInString(s)
	if r == '\n' || attaches(r) && r != 0x200D {
		return n // a newline, or a mark with nothing before it: a cluster of its own
	}
	for isPrepend(r) && n < len(s) { // UAX #29 GB9b: a prepended rune joins what follows
		r2, n2 := utf8.DecodeRuneInString(s[n:])
		if r2 == '\n' {
			return n
		}
		r, n = r2, n+n2
	}
	if isRegional(r) {
		if r2, n2 := utf8.DecodeRuneInString(s[n:]); isRegional(r2) {
			n += n2
		}
	}
	for prev := r; n < len(s); { // conjoining Hangul: L L… V… T… form one cluster
		r2, n2 := utf8.DecodeRuneInString(s[n:])
		if !hangulJoins(prev, r2) {
			break
		}
		prev, n = r2, n+n2
	}
	linked := false // after a virama: an Indic conjunct joins the consonant that follows
	for n < len(s) {
		r2, n2 := utf8.DecodeRuneInString(s[n:])
		switch {
		case linked && conjunctConsonant(r2):
			n += n2
			linked = false
		case r2 == 0x200D:
			n += n2
			if n < len(s) {
				if r3, n3 := utf8.DecodeRuneInString(s[n:]); r3 != '\n' {
					n += n3
				}
			}
		case attaches(r2):
			n += n2
			linked = linked || isLinker(r2)
		default:
			return n
		}
	}
	return n
}

// isLinker reports the viramas that UAX #29 (rule GB9c, Unicode 15.1) lets join the next
// consonant into one cluster: Devanagari, Bengali, Gujarati, Oriya, Telugu, Malayalam. Those
// grapheme-aware measures draw "न्ध" as one cell and wcwidth as two, so the whole conjunct is
// one uncertain cluster (it becomes a StandIn), never two clusters each of certain width.
func isLinker(r rune) bool {
	switch r {
	case 0x094D, 0x09CD, 0x0ACD, 0x0B4D, 0x0C4D, 0x0D4D:
		return true
	}
	return false
}

// conjunctConsonant reports a letter of one of the scripts isLinker names.
func conjunctConsonant(r rune) bool {
	return r >= 0x0900 && r <= 0x0D7F && unicode.IsLetter(r)
}

// attaches reports the runes that join the rune before them: marks, joiners, selectors,
// modifiers, tags, and the two letters UAX #29 counts as spacing marks (Thai and Lao SARA
// AM, U+0E33 and U+0EB3: grapheme-aware measures draw "0ำ" as one cell, wcwidth as two).
func attaches(r rune) bool {
	switch {
	case r < 0x300:
		return false
	case r == 0x200D,
		r == 0x0E33,
		r == 0x0EB3,
		isVariationSelector(r),
		r >= 0x1F3FB && r <= 0x1F3FF,
		r >= 0xE0020 && r <= 0xE007F:
		return true
	}
	if r >= 0x4E00 && r <= 0x9FFF || hangulSyl(r) {
		return false // CJK ideographs and Hangul syllables: the bulk of wide text, never marks
	}
	return unicode.Is(unicode.M, r)
}

// isPrepend reports the runes of Grapheme_Cluster_Break=Prepend (Unicode 15.1): each joins
// the rune after it into one cluster. They are never certain alone (measureRune).
func isPrepend(r rune) bool {
	switch {
	case r >= 0x0600 && r <= 0x0605, r == 0x06DD, r == 0x070F, r == 0x0890, r == 0x0891, r == 0x08E2,
		r == 0x0D4E, r == 0x110BD, r == 0x110CD, r == 0x111C2, r == 0x111C3, r == 0x1193F, r == 0x11941,
		r == 0x11A3A, r >= 0x11A84 && r <= 0x11A89, r == 0x11D46, r == 0x11F02:
		return true
	}
	return false
}

func isVariationSelector(r rune) bool {
	return r >= 0xFE00 && r <= 0xFE0F || r >= 0xE0100 && r <= 0xE01EF || r >= 0x180B && r <= 0x180F
}

// The Hangul jamo classes of UAX #29: leading (L), vowel (V), trailing (T), and the
// precomposed syllables with (LVT) or without (LV) a trailing consonant.
func hangulL(r rune) bool   { return r >= 0x1100 && r <= 0x115F || r >= 0xA960 && r <= 0xA97C }
func hangulV(r rune) bool   { return r >= 0x1160 && r <= 0x11A7 || r >= 0xD7B0 && r <= 0xD7C6 }
func hangulT(r rune) bool   { return r >= 0x11A8 && r <= 0x11FF || r >= 0xD7CB && r <= 0xD7FB }
func hangulSyl(r rune) bool { return r >= 0xAC00 && r <= 0xD7A3 }
func hangulLV(r rune) bool  { return hangulSyl(r) && (r-0xAC00)%28 == 0 }

func isHangulVT(r rune) bool { return hangulV(r) || hangulT(r) }

// hangulJoins reports whether jamo or syllable b continues the conjoining sequence ending in
// a (GB6-GB8 of UAX #29).
func hangulJoins(a, b rune) bool {
	switch {
	case hangulL(a):
		return hangulL(b) || hangulV(b) || hangulSyl(b)
	case hangulV(a) || hangulLV(a):
		return hangulV(b) || hangulT(b)
	case hangulT(a) || hangulSyl(a):
		return hangulT(b)
	}
	return false
}

func isRegional(r rune) bool { return r >= 0x1F1E6 && r <= 0x1F1FF }

// certain reports whether cluster c is drawn as the same number of cells by steward and by
// any terminal.
func certain(c string) bool {
	base, n := utf8.DecodeRuneInString(c)
	if !certainRune(base) {
		return false
	}
	if n == len(c) {
		return true // one rune: measured (and remembered) by certainRune
	}
	for _, r := range c[n:] {
		if !unicode.Is(unicode.Mn, r) || isVariationSelector(r) {
			return false
		}
	}
	w := ansi.StringWidth(c)
	return w == ansi.StringWidthWc(c) && (w == 1 || w == 2)
}

// bmpCache remembers certainRune for the Basic Multilingual Plane, two bits a rune (0 not
// yet known, 1 certain, 2 not): measuring a rune both ways costs about a microsecond, and a
// screen of CJK names asks for the same few hundred runes again and again. Other planes use
// astralCache.
var (
	bmpCache    [0x10000 / 16]atomic.Uint32
	astralCache sync.Map // rune → bool
)

// certainRune reports whether r alone is drawn alike everywhere.
func certainRune(r rune) bool {
	if r < 0x300 {
		return r != 0xAD && safeRune(r)
	}
	if r < 0x10000 {
		word, shift := &bmpCache[r/16], uint(r%16)*2
		switch word.Load() >> shift & 3 {
		case 1:
			return true
		case 2:
			return false
		}
		v := measureRune(r)
		bits := uint32(2)
		if v {
			bits = 1
		}
		for {
			old := word.Load()
			if word.CompareAndSwap(old, old|bits<<shift) {
				return v
			}
		}
	}
	if v, ok := astralCache.Load(r); ok {
		return v.(bool)
	}
	v := measureRune(r)
	astralCache.Store(r, v)
	return v
}

// measureRune is certainRune without the cache, for r >= U+0300.
func measureRune(r rune) bool {
	switch {
	case !safeRune(r),
		attaches(r),
		isPrepend(r),
		isRegional(r),
		isHangulVT(r),
		unicode.Is(unicode.Cf, r),
		unicode.Is(unicode.Co, r),
		r == 0x115F,
		r == 0x3164,
		r == 0xFFA0,
		r == 0x2028,
		r == 0x2029,
		unicode.Is(unicode.Zl, r),
		unicode.Is(unicode.Zp, r):
		return false
	}
	w := ansi.StringWidth(string(r))
	return w == ansi.StringWidthWc(string(r)) && (w == 1 || w == 2)
}

// Cell returns how one rune of text a person is editing is drawn: itself when it is one
// certain cell or two, else StandIn — one rune, one drawn character, so an editor's cursor
// stays where its runes say (the text itself is kept as typed; see Editable).
func Cell(r rune) string {
	if r == '\n' || certainRune(r) {
		return string(r)
	}
	return StandIn
}
