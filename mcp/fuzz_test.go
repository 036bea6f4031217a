package mcp

import (
	"strings"
	"testing"
)

// FuzzParseClarification: a clarification id is external input (the model passes it back);
// whatever it holds, parsing never panics, and what parses names exactly one item and one
// marker id, printing back as the same id.
func FuzzParseClarification(f *testing.F) {
	for _, s := range []string{"acme/widgets#3/ans-0123456789abcdef", "a/b#1/ans-ffffffffffffffff", "", "a/b#0/ans-0123456789abcdef",
		"a/b/c#1/ans-0123456789abcdef", "acme/widgets#3/ans-0123456789abcdeF", " acme/widgets#12/ans-0123456789abcdef\n", "a/b#99999999999999999999/ans-0123456789abcdef"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		it, id, ok := parseClarification(s)
		if !ok {
			return
		}
		if it.Number <= 0 || it.Org == "" || it.Repo == "" || strings.ContainsAny(it.Org+it.Repo, "/# \t\n") || !strings.HasPrefix(id, "ans-") {
			t.Fatalf("%q parsed as %+v %q", s, it, id)
		}
		if back := clarificationID(it, id); back != strings.TrimSpace(s) {
			t.Fatalf("%q parsed and printed back as %q", s, back)
		}
	})
}
