package phase

import (
	"os"
	"path/filepath"
	"testing"
)

func TestCountStatusClaims(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, doc string
		want      int
		bad       bool
	}{
		{"three", `{"generated_at":"x","sources":{"claims":[1,2]},"claims":[{"item":{"n":1},"evidence":[{"a":"claims"}]},{"claims":[{}]},{}],"orphans":[{}]}`, 3, false},
		{"empty", `{"claims":[],"sessions":[{}]}`, 0, false},
		{"null", `{"claims":null}`, 0, true},
		{"absent", `{"orphans":[{}]}`, 0, true},
		{"truncated", `{"claims":[{},{}`, 0, true},
		{"string value named claims", `{"x":"claims","claims":[{}]}`, 1, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, statusOut), []byte(c.doc), 0o600); err != nil {
				t.Fatal(err)
			}
			n, size, err := CountStatusClaims(dir)
			if c.bad {
				if err == nil {
					t.Fatalf("no error for %s (n=%d)", c.doc, n)
				}
				return
			}
			if err != nil || n != c.want || size != int64(len(c.doc)) {
				t.Fatalf("= %d, %d, %v; want %d, %d", n, size, err, c.want, len(c.doc))
			}
		})
	}
}
