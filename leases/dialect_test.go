package leases

import "testing"

// TestBindNumbersPlaceholders: on PostgreSQL each ? of a statement becomes $1, $2, … in
// order — in a fragment as short as one placeholder too — while a ? inside a string literal or a quoted identifier is text and stays; SQLite
// takes the statement as written.
func TestBindNumbersPlaceholders(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ q, pg string }{
		{`SELECT 1`, `SELECT 1`},
		{`?`, `$1`}, // a fragment as short as one placeholder
		{`a = ?`, `a = $1`},
		{`UPDATE t SET a = ? WHERE b = ?`, `UPDATE t SET a = $1 WHERE b = $2`},
		{`SELECT ? WHERE note = 'why?' AND x = ?`, `SELECT $1 WHERE note = 'why?' AND x = $2`},
		{`SELECT "odd?col" FROM t WHERE a = ?`, `SELECT "odd?col" FROM t WHERE a = $1`},
		{`SELECT 'it''s ?', ?`, `SELECT 'it''s ?', $1`},
		{`SELECT '"?', ?`, `SELECT '"?', $1`},
	} {
		if got := pgSQL.bind(c.q); got != c.pg {
			t.Errorf("PostgreSQL bind(%s) = %s, want %s", c.q, got, c.pg)
		}
		if got := sqliteSQL.bind(c.q); got != c.q {
			t.Errorf("SQLite bind(%s) = %s, want it unchanged", c.q, got)
		}
	}
}
