package govern

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestInflightPathTakesOnlyAttemptIDs: the in-flight marker of an attempt is a file named
// by the attempt id under <audit log>.inflight/ — only an id of letters, digits, '-', '_'
// and '.', not starting with '.', and at most 128 bytes long names one; anything else (a
// path, a dot file, a space, a longer id) names none, so a damaged or hostile record can
// never make steward lock a file outside that directory.
func TestInflightPathTakesOnlyAttemptIDs(t *testing.T) {
	l := &AuditLog{path: filepath.Join(t.TempDir(), "audit.jsonl")}
	for _, c := range []struct {
		id string
		ok bool
	}{
		{"att-01HZX_a.b", true},
		{"azAZ09-_.", true},
		{"a", true}, {"z", true}, {"A", true}, {"Z", true}, {"0", true}, {"9", true},
		{"x-", true}, {"x_", true}, {"x.", true},
		{strings.Repeat("a", 128), true},
		{strings.Repeat("a", 129), false},
		{"", false},
		{".hidden", false},
		{"a/b", false}, {"../x", false}, {"a b", false}, {"a\x00", false},
		{"`", false}, {"{", false}, {"@", false}, {"[", false}, {"/", false}, {":", false},
		{"x`", false}, {"x{", false}, {"x@", false}, {"x[", false}, {"x:", false}, {"x+", false}, {"x,", false},
		{"x^", false}, {"x/", false}, {"é", false},
	} {
		p, ok := l.inflightPath(c.id)
		if ok != c.ok {
			t.Errorf("attempt %q: names a marker %v, want %v", c.id, ok, c.ok)
			continue
		}
		if ok && p != filepath.Join(l.path+".inflight", c.id) {
			t.Errorf("attempt %q: marker %s, want it under %s.inflight/", c.id, p, l.path)
		}
	}
}

// TestQuoteArgCutsPast80: a worker's value quoted in a refusal keeps 80 characters whole
// and is cut, marked with "…" (quoted as \u2026), from the 81st.
func TestQuoteArgCutsPast80(t *testing.T) {
	if got := quoteArg(strings.Repeat("x", 80)); strings.Contains(got, `\u2026`) || strings.Count(got, "x") != 80 {
		t.Errorf("80 characters quoted as %q, want them whole", got)
	}
	if got := quoteArg(strings.Repeat("x", 81)); !strings.Contains(got, `\u2026`) || strings.Count(got, "x") != 80 {
		t.Errorf("81 characters quoted as %q, want 80 and a mark", got)
	}
}
