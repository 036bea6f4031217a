package leases

import (
	"context"
	"database/sql"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// busyTimeout is the SQLite busy_timeout every handle sets.
const busyTimeout = 5 * time.Second

// dsnOpts are the connection settings of a handle.
type dsnOpts struct {
	// immediate makes every transaction BEGIN IMMEDIATE (writers take the lock up front).
	immediate bool
	// tuned adds synchronous=NORMAL and foreign_keys=1: only for a DB steward created,
	// which Migrate put in WAL mode. A DB steward did not create is written with SQLite's
	// defaults, as its owner writes it (synchronous FULL, its own foreign-key setting).
	tuned bool
	// immutable (readers only) tells SQLite the file cannot change: it takes no lock and
	// never opens a -wal or -shm (see readmode.go for when that is exact).
	immutable bool
	// readonlySHM (readers only) opens an existing -shm read-only: the reader never
	// writes its read marks into it, and never creates one.
	readonlySHM bool
}

// dsn builds a file: URI so SQLite honours mode=; the driver consumes the
// underscore keys. mode is "ro", "rw" or "rwc". No DSN ever sets journal_mode:
// opening a file never changes it (Migrate switches a DB it creates to WAL).
func dsn(path, mode string, o dsnOpts, busy time.Duration) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	q := url.Values{}
	q.Set("mode", mode)
	q.Add("_pragma", "busy_timeout("+strconv.Itoa(int(busy/time.Millisecond))+")")
	if o.tuned {
		q.Add("_pragma", "synchronous(NORMAL)")
		q.Add("_pragma", "foreign_keys(1)")
	}
	if o.immediate {
		q.Set("_txlock", "immediate")
	}
	if o.immutable {
		q.Set("immutable", "1")
	}
	if o.readonlySHM {
		q.Set("readonly_shm", "1")
	}
	return "file:" + (&url.URL{Path: abs}).EscapedPath() + "?" + q.Encode(), nil
}

// exists reports ErrNoDB (as a *DBError) when path does not exist.
func exists(op, path string) error {
	fi, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return &DBError{Op: op, Path: path, Err: ErrNoDB}
	}
	if err != nil {
		return &DBError{Op: op, Path: path, Err: err}
	}
	if fi.IsDir() {
		return &DBError{Op: op, Path: path, Err: ErrNotSQLite, Detail: "is a directory"}
	}
	// SQLite opens without O_NONBLOCK: a FIFO would block the open forever, and a device
	// or socket is no database either.
	if !fi.Mode().IsRegular() {
		return &DBError{
			Op:     op,
			Path:   path,
			Err:    ErrNotSQLite,
			Detail: "not a regular file (" + fi.Mode().Type().String() + ")",
		}
	}
	return nil
}

// open opens a handle and proves the file is a readable SQLite database.
func open(ctx context.Context, op, path, mode string, o dsnOpts, busy time.Duration) (*sql.DB, error) {
	d, err := dsn(path, mode, o, busy)
	if err != nil {
		return nil, &DBError{Op: op, Path: path, Err: err}
	}
	db, err := sql.Open("sqlite", d)
	if err != nil {
		return nil, mapErr(op, path, err)
	}
	var n int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master").Scan(&n); err != nil {
		db.Close()
		return nil, mapErr(op, path, err)
	}
	return db, nil
}

// Migrate creates the DB file (and its directory, mode 0o700) if needed,
// applies steward's embedded migrations in order and puts the file in WAL
// mode. It is for demos, tests and fixtures; readers never call it. A file
// holding a control-plane schema that steward did not create is refused with
// ErrForeignSchema before anything is written (its journal mode included).
func Migrate(path string) error {
	const op = "migrate"
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return &DBError{Op: op, Path: path, Err: err}
	}
	ctx := context.Background()
	defer writerOpening(path)()
	db, err := open(ctx, op, path, "rwc", dsnOpts{tuned: true}, busyTimeout)
	if err != nil {
		return err
	}
	defer db.Close()
	if err := migrate(ctx, db, path); err != nil {
		return err
	}
	// Only now, on a file proven steward's: WAL is a property of the file, so it is set
	// once here and every later handle keeps it.
	var mode string
	if err := db.QueryRowContext(ctx, "PRAGMA journal_mode=WAL").Scan(&mode); err != nil {
		return mapErr(op, path, err)
	}
	return nil
}
