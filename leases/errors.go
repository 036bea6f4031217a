package leases

import (
	"errors"
	"fmt"

	"modernc.org/sqlite"
)

// Sentinel errors. Driver (SQLite) errors are mapped to these at the package
// boundary and never leak upward raw.
var (
	// ErrNoDB is returned by OpenReadOnly (and by reads) when the DB file does
	// not exist. It means missing authority, never an empty inventory.
	ErrNoDB = errors.New("control-plane DB file does not exist")
	// ErrNotSQLite is returned when the file exists but is not a SQLite
	// database (SQLITE_NOTADB).
	ErrNotSQLite = errors.New("file is not a SQLite database")
	// errCorrupt is returned when SQLite reports a malformed database image
	// (SQLITE_CORRUPT).
	errCorrupt = errors.New("database disk image is malformed")
	// ErrBusy is returned by reads and Migrate when the database stayed
	// locked past the busy timeout (SQLITE_BUSY/SQLITE_LOCKED). Transitions
	// report it as an Outcome with CodeBusy instead.
	ErrBusy = errors.New("database is busy")
	// errSQLite is returned for any other SQLite failure; the driver's
	// message is kept in DBError.Detail.
	errSQLite = errors.New("SQLite error")
	// ErrForeignSchema is returned by Migrate when the file already holds a
	// control-plane schema that steward's migrations did not create.
	ErrForeignSchema = errors.New("database holds a schema steward did not create")
	// errNoTable is returned by single-row reads when the table they need is
	// absent from the database.
	errNoTable = errors.New("required table is absent")
	// ErrUnreachable is returned when a PostgreSQL server cannot be reached or refuses
	// the connection (network, authentication, no such database, shutting down). It
	// means missing authority, never an empty inventory.
	ErrUnreachable = errors.New("control-plane DB server unreachable")
	// errPostgres is returned for any other PostgreSQL failure; the server's message
	// and SQLSTATE are kept in DBError.Detail.
	errPostgres = errors.New("PostgreSQL error")
	// ErrBadURL is returned for a PostgreSQL URL that cannot be used: unparseable, or
	// carrying a password (which belongs in a file or the environment).
	ErrBadURL = errors.New("unusable control-plane DB URL")
	// ErrNotInitialised is returned by InitPG's callers and OpenPGStore when a
	// PostgreSQL database holds no control-plane tables: run steward init --db on it.
	ErrNotInitialised = errors.New("database holds no control-plane schema")
	// ErrMaybeSent is matched (errors.Is) by the error of a transition that failed after its
	// writes may have reached the database: on PostgreSQL the connection failed once a write
	// statement or the COMMIT had been sent (the server may have run them and committed;
	// only its answer was lost), on SQLite COMMIT itself failed. Whether the transition took
	// effect is unknown until it is read back — the events and leases it writes name the
	// governed attempt (WithAttempt) — so it must never be reported as failed. An error
	// without it is definitive: nothing was committed.
	ErrMaybeSent = errors.New("the transaction's writes may have reached the database")
)

// DBError records the operation and path of a failed database call. Err is
// one of this package's sentinels (or a non-driver error such as a context
// error); Detail keeps the driver's message for the user.
type DBError struct {
	Op     string
	Path   string
	Err    error
	Detail string
	// Sent is set when the failing transaction's writes may have reached the database
	// (ErrMaybeSent).
	Sent bool
}

// Error implements error.
func (e *DBError) Error() string {
	s := fmt.Sprintf("leases: %s %s: %v", e.Op, e.Path, e.Err)
	if e.Detail != "" {
		s += " (" + e.Detail + ")"
	}
	if e.Sent {
		s += " — after its writes were sent to the database"
	}
	return s
}

// Unwrap returns the sentinel.
func (e *DBError) Unwrap() error { return e.Err }

// Is matches ErrMaybeSent when the writes may have reached the database.
func (e *DBError) Is(target error) bool { return e.Sent && target == ErrMaybeSent }

// sqliteCode returns the primary SQLite result code of err, or 0.
func sqliteCode(err error) int {
	var se *sqlite.Error
	if errors.As(err, &se) {
		return se.Code() & 0xff
	}
	return 0
}

// SQLite primary result codes used at the boundary.
const (
	codeBusy    = 5
	codeLocked  = 6
	codeCorrupt = 11
	codeNotADB  = 26
)

// isBusy reports whether err is SQLITE_BUSY or SQLITE_LOCKED.
func isBusy(err error) bool {
	c := sqliteCode(err)
	return c == codeBusy || c == codeLocked || errors.Is(err, ErrBusy)
}

// mapErr maps a driver error to a *DBError carrying one of the sentinels.
// It returns nil for nil and passes an existing *DBError through.
func mapErr(op, path string, err error) error {
	if err == nil {
		return nil
	}
	var de *DBError
	if errors.As(err, &de) {
		return err
	}
	var se *sqlite.Error
	if !errors.As(err, &se) {
		if pe := mapPGErr(op, path, err); pe != nil {
			return pe
		}
		return &DBError{Op: op, Path: path, Err: err}
	}
	var s error
	switch se.Code() & 0xff {
	case codeBusy, codeLocked:
		s = ErrBusy
	case codeNotADB:
		s = ErrNotSQLite
	case codeCorrupt:
		s = errCorrupt
	default:
		s = errSQLite
	}
	return &DBError{Op: op, Path: path, Err: s, Detail: se.Error()}
}
