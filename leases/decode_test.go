package leases

import "testing"

// TestParseInt: an integer column reads as its number, also when the DB stored it as a
// whole float ("42.0", as a REAL column or another writer may); a fraction or text is not a
// number (the row gets a problem), and empty text is 0.
func TestParseInt(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		raw  string
		want int64
		ok   bool
	}{
		{"42", 42, true},
		{" -7 ", -7, true},
		{"42.0", 42, true},
		{"1e3", 1000, true},
		{"", 0, true},
		{"42.5", 0, false},
		{"x", 0, false},
		{"0x10", 0, false},
	} {
		if n, ok := parseInt(c.raw); n != c.want || ok != c.ok {
			t.Errorf("parseInt(%q) = %d, %v; want %d, %v", c.raw, n, ok, c.want, c.ok)
		}
	}
}
