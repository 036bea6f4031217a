package locks

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"steward/locks/lockrec"
)

// steward's file-name convention for lock files it creates (the seed does
// not show the pattern its store uses):
//
//	<remote>__<org>__<repo>__issue-<n>.json
//
// Each component is escaped so the name is safe and reversible: bytes other
// than ASCII letters, digits, '-' and '.' become %XX (so '_' is %5F and
// "__" only ever separates), and a leading '.' becomes %2E (no hidden
// names, no "..").

const (
	nameSep    = "__"
	nameIssue  = "issue-"
	nameSuffix = ".json"
	maxNameLen = 255
)

// Name returns the canonical file name for a lock with key k. ok is false
// when the name would exceed 255 bytes, the issue number is negative, or a part of the key
// is not valid UTF-8 (parseName could not read such a name back to the same key).
func Name(k lockrec.Key) (string, bool) {
	if k.Issue < 0 || !utf8.ValidString(k.Remote) || !utf8.ValidString(k.Org) || !utf8.ValidString(k.Repo) {
		return "", false
	}
	var b strings.Builder
	for _, c := range []string{k.Remote, k.Org, k.Repo} {
		escapeComponent(&b, c)
		b.WriteString(nameSep)
	}
	b.WriteString(nameIssue)
	b.WriteString(strconv.FormatInt(k.Issue, 10))
	b.WriteString(nameSuffix)
	if b.Len() > maxNameLen {
		return "", false
	}
	return b.String(), true
}

// parseName is the inverse of Name; ok is false for any name Name would not
// produce.
func parseName(name string) (lockrec.Key, bool) {
	base, found := strings.CutSuffix(name, nameSuffix)
	if !found {
		return lockrec.Key{}, false
	}
	parts := strings.Split(base, nameSep)
	if len(parts) != 4 || !strings.HasPrefix(parts[3], nameIssue) {
		return lockrec.Key{}, false
	}
	digits := parts[3][len(nameIssue):]
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || n < 0 || strconv.FormatInt(n, 10) != digits {
		return lockrec.Key{}, false
	}
	var comps [3]string
	for i := range comps {
		c, ok := unescapeComponent(parts[i])
		if !ok {
			return lockrec.Key{}, false
		}
		comps[i] = c
	}
	k := lockrec.Key{Remote: comps[0], Org: comps[1], Repo: comps[2], Issue: n}
	if again, ok := Name(k); !ok || again != name {
		return lockrec.Key{}, false
	}
	return k, true
}

func escapeComponent(b *strings.Builder, s string) {
	const hex = "0123456789ABCDEF"
	for i := 0; i < len(s); i++ {
		c := s[i]
		plain := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' ||
			(c == '.' && i > 0)
		if plain {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&0xf])
	}
}

func unescapeComponent(s string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b.WriteByte(s[i])
			continue
		}
		if i+2 >= len(s) {
			return "", false
		}
		n, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
		if err != nil {
			return "", false
		}
		b.WriteByte(byte(n))
		i += 2
	}
	out := b.String()
	return out, utf8.ValidString(out)
}

// ValidName reports whether name is a plain lock file name the write
// primitives accept: non-empty, at most 255 bytes, ending in ".json", no
// path separator, no leading '.', no control characters or invalid UTF-8.
func ValidName(name string) bool {
	if name == "" || len(name) > maxNameLen || !strings.HasSuffix(name, nameSuffix) ||
		name == nameSuffix || strings.HasPrefix(name, ".") || !utf8.ValidString(name) {
		return false
	}
	for _, r := range name {
		if r == '/' || r == '\\' || r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}
