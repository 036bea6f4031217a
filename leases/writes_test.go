package leases

import "testing"

// TestWriteTxSendsByTheDialect: every statement of the one write path goes through wtx.
// On PostgreSQL it numbers the placeholders and records a write about to be sent (an
// error after that is maybe sent); a read, a row lock and the clock record nothing. On
// SQLite it sends the statement as written and records nothing, writes included: SQLite's
// statements are local calls whose errors are definitive, and only an error from COMMIT
// may come after the commit (finish).
func TestWriteTxSendsByTheDialect(t *testing.T) {
	for _, c := range []struct {
		d     dialect
		q     string
		sent  string
		wrote bool
	}{
		{pgSQL, `UPDATE leases SET status = ? WHERE lease_id = ?`, `UPDATE leases SET status = $1 WHERE lease_id = $2`, true},
		{pgSQL, `INSERT INTO events(message) VALUES(?) RETURNING event_id`, `INSERT INTO events(message) VALUES($1) RETURNING event_id`, true},
		{pgSQL, `SELECT pg_notify(?, ?)`, `SELECT pg_notify($1, $2)`, true},
		{pgSQL, `SELECT 1 FROM leases WHERE lease_id = ? FOR UPDATE`, `SELECT 1 FROM leases WHERE lease_id = $1 FOR UPDATE`, false},
		{pgSQL, `SELECT lease_id FROM leases WHERE status = '?'`, `SELECT lease_id FROM leases WHERE status = '?'`, false},
		{sqliteSQL, `UPDATE leases SET status = ? WHERE lease_id = ?`, `UPDATE leases SET status = ? WHERE lease_id = ?`, false},
		{sqliteSQL, `INSERT INTO events(message) VALUES(?) RETURNING rowid`, `INSERT INTO events(message) VALUES(?) RETURNING rowid`, false},
	} {
		p := &progress{}
		if got := (wtx{d: c.d, p: p}).sql(c.q); got != c.sent || p.wrote != c.wrote {
			t.Errorf("pg %v: %q sent as %q, recorded a write %v; want %q, %v", c.d.pg, c.q, got, p.wrote, c.sent, c.wrote)
		}
	}
}
