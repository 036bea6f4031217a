package leases

import (
	"context"
	"database/sql"
	"time"
)

// Pending is implemented by a Reader whose database can still be running a transaction
// after its client gave up on the answer (PostgreSQL: the client's connection broke, the
// server's session goes on until it notices, and a COMMIT on its way may still land). A
// verifier asks it before it reads an attempt's absence as "not committed". SQLite has
// nothing to ask: its transaction ends with the call that ran it.
type Pending interface {
	// Pending lists the server sessions still inside a transaction of the governed
	// attempt (none: the attempt's transactions have all ended, committed or not).
	Pending(ctx context.Context, attempt string) ([]Backend, error)
}

// Backend is a database session still running a governed attempt's transaction.
type Backend struct {
	PID   int64     // the server process (pg_terminate_backend ends it)
	State string    // "idle in transaction": waiting for its client's next statement
	Since time.Time // when the transaction began
}

var _ Pending = (*PGReader)(nil)

// pendingPrefix starts the application_name of a transaction run for a governed attempt.
const pendingPrefix = "steward attempt "

// pendingName is the application_name of attempt's transactions ("" for none, or for an
// id too long to be kept whole: PostgreSQL truncates names at 63 bytes).
func pendingName(attempt string) string {
	if attempt == "" || len(pendingPrefix)+len(attempt) > 63 {
		return ""
	}
	return pendingPrefix + attempt
}

// Pending lists the sessions of this database still in a transaction named for attempt
// (PGStore sets the name, SET LOCAL, first in each transaction it runs for an attempt;
// the name reverts when the transaction ends, after its commit is visible).
func (r *PGReader) Pending(ctx context.Context, attempt string) ([]Backend, error) {
	name := pendingName(attempt)
	if name == "" {
		return nil, nil
	}
	rows, err := r.db.QueryContext(ctx, `SELECT pid, coalesce(state, ''), xact_start FROM pg_stat_activity
		WHERE datname = current_database() AND application_name = $1 AND pid <> pg_backend_pid()`, name)
	if err != nil {
		return nil, mapErr("pending", r.path, err)
	}
	defer rows.Close()
	var out []Backend
	for rows.Next() {
		var s Backend
		var since sql.NullTime
		if err := rows.Scan(&s.PID, &s.State, &since); err != nil {
			return nil, mapErr("pending", r.path, err)
		}
		s.Since = since.Time.UTC()
		out = append(out, s)
	}
	return out, mapErr("pending", r.path, rows.Err())
}
