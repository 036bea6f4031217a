package leases

import (
	"database/sql"
	"errors"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// How far a write transaction got decides what its error means: an error before any write
// was sent, or one the database answered with (it rolled the transaction back), is
// definitive — nothing was committed; an error once a write statement or the COMMIT was
// on its way may have come after the database committed, with only its answer lost. Both
// stores end every transition through finish and report a maybe-sent error with
// sentError, so the classification lives here alone.

// progress records how far one write transaction got.
type progress struct {
	// wrote: a write statement was handed to the connection (PostgreSQL: the server may
	// have run it; SQLite's writes are local calls whose errors are definitive, and are not
	// recorded).
	wrote bool
	// committing: COMMIT was sent.
	committing bool
}

// note records that q is about to be sent, when it writes.
func (p *progress) note(q string) {
	if p != nil && writesSQL(q) {
		p.wrote = true
	}
}

// writesSQL reports whether a statement writes: INSERT, UPDATE or DELETE (also inside a
// WITH), or a notify, which is part of what the transaction commits.
func writesSQL(q string) bool {
	u := strings.ToUpper(strings.TrimSpace(q))
	for _, w := range []string{"INSERT", "UPDATE", "DELETE", "NOTIFY"} {
		if strings.HasPrefix(u, w) {
			return true
		}
	}
	if strings.HasPrefix(u, "WITH") {
		return strings.Contains(u, "INSERT") || strings.Contains(u, "UPDATE") || strings.Contains(u, "DELETE")
	}
	return strings.Contains(u, "PG_NOTIFY(")
}

// finish ends tx after its transition ran: a refusal that records nothing, or an error,
// rolls back; anything else commits (beforeCommit runs first: the crash tests stop there).
// sent reports that the error may have come after the database committed the writes:
//
//   - an error of the transition itself is definitive when the rollback was acknowledged
//     (the database has discarded the writes) or the database answered with it (a
//     PostgreSQL error aborts the transaction); otherwise, once a write was sent, the
//     connection failed with the transaction's fate in the server's hands: maybe sent;
//   - an error from COMMIT is maybe sent, unless the database answered that it did not
//     commit (PostgreSQL's ERROR severity: a serialization failure, a deferred
//     constraint) or SQLite was busy (nothing committed; the transition is run again).
func finish(
	tx *sql.Tx,
	p *progress,
	out Outcome,
	commit bool,
	err error,
	beforeCommit func(),
) (_ Outcome, sent bool, _ error) {
	if err != nil || (!out.OK() && !commit) {
		rerr := tx.Rollback()
		if err == nil {
			return out, false, nil
		}
		return out, p.wrote && rerr != nil && !answered(err), err
	}
	if beforeCommit != nil {
		beforeCommit()
	}
	p.committing = true
	if err := tx.Commit(); err != nil {
		tx.Rollback()
		return Outcome{}, !refusedCommit(err), err
	}
	return out, false, nil
}

// answered reports an error the PostgreSQL server sent: the transaction is aborted.
func answered(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe)
}

// refusedCommit reports a COMMIT the database answered with "not committed".
func refusedCommit(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Severity == "ERROR"
	}
	return isBusy(err)
}

// sentError is err, from a transition whose writes may have reached the database, as a
// *DBError matching ErrMaybeSent.
func sentError(op, path string, err error) error {
	var de *DBError
	if !errors.As(mapErr(op, path, err), &de) {
		return &DBError{Op: op, Path: path, Err: err, Sent: true}
	}
	cp := *de
	cp.Sent = true
	return &cp
}
