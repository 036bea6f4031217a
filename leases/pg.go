package leases

import (
	"bufio"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
)

// IsPostgresURL reports whether loc is a postgres:// or postgresql:// URL.
func IsPostgresURL(loc string) bool {
	l := strings.ToLower(strings.TrimSpace(loc))
	return strings.HasPrefix(l, "postgres://") || strings.HasPrefix(l, "postgresql://")
}

// redactURL is a PostgreSQL URL as it may be shown: scheme, user, host, port and
// database — never a password, never the query (which libpq lets carry one).
func redactURL(loc string) string {
	u, err := url.Parse(strings.TrimSpace(loc))
	if err != nil {
		return "postgres://(unparseable URL)"
	}
	out := url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}
	if u.User != nil {
		out.User = url.User(u.User.Username())
	}
	return out.String()
}

// checkPostgresURL refuses a PostgreSQL URL that carries a password (in its user
// info or as a password= parameter): a password there shows in argv, in logs and in
// the config file. It says where to put the password instead.
func checkPostgresURL(loc string) error {
	u, err := url.Parse(strings.TrimSpace(loc))
	if err != nil {
		return &DBError{Op: "open", Path: redactURL(loc), Err: ErrBadURL, Detail: "not a URL"}
	}
	_, inUser := u.User.Password()
	inQuery := false
	for k := range u.Query() {
		if strings.EqualFold(k, "password") {
			inQuery = true
		}
	}
	if inUser || inQuery {
		return &DBError{Op: "open", Path: redactURL(loc), Err: ErrBadURL,
			Detail: "the URL carries a password; remove it and put it in a file (db_password_file, " +
				"or a PGPASSFILE/~/.pgpass file) or in PGPASSWORD"}
	}
	return nil
}

// pgConfig parses t into a connection config: the URL (and the PG* environment, as
// libpq reads it), the password from t.PasswordFile when set, and steward's session
// settings: a lock wait bounded by lockTimeout (a row held past it is busy, never a
// hang), the application name, and a read-only default for readers.
func pgConfig(t Target, readOnly bool, lockTimeout time.Duration) (*pgx.ConnConfig, error) {
	if err := checkPostgresURL(t.Loc); err != nil {
		return nil, err
	}
	cfg, err := pgx.ParseConfig(strings.TrimSpace(t.Loc))
	if err != nil {
		// pgx's message may quote the string it parsed; say only what kind of problem.
		return nil, &DBError{Op: "open", Path: t.String(), Err: ErrBadURL, Detail: "not a valid PostgreSQL connection URL"}
	}
	if t.PasswordFile != "" {
		pw, err := readPasswordFile(t.PasswordFile)
		if err != nil {
			return nil, &DBError{Op: "open", Path: t.String(), Err: err}
		}
		cfg.Password = pw
	}
	if cfg.RuntimeParams == nil {
		cfg.RuntimeParams = map[string]string{}
	}
	if _, ok := cfg.RuntimeParams["application_name"]; !ok {
		cfg.RuntimeParams["application_name"] = "steward"
	}
	cfg.RuntimeParams["lock_timeout"] = itoa(lockTimeout.Milliseconds())
	if readOnly {
		cfg.RuntimeParams["default_transaction_read_only"] = "on"
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = 10 * time.Second
	}
	return cfg, nil
}

// readPasswordFile reads the first line of a password file that only its owner can
// read (as libpq requires of a .pgpass file).
func readPasswordFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "", errors.New("password file " + path + " is not a regular file")
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return "", errors.New("password file " + path + " is readable by others (mode " + fi.Mode().Perm().String() +
			"); chmod 600 it")
	}
	line, err := bufio.NewReader(io.LimitReader(f, 4096)).ReadString('\n')
	if err != nil && err != io.EOF {
		return "", err
	}
	line = strings.TrimRight(line, "\r\n")
	if line == "" {
		return "", errors.New("password file " + path + " is empty")
	}
	return line, nil
}

// openPG opens a database/sql handle on the PostgreSQL DB t names and proves it
// reachable.
func openPG(ctx context.Context, op string, t Target, readOnly bool, lockTimeout time.Duration) (*sql.DB, error) {
	cfg, err := pgConfig(t, readOnly, lockTimeout)
	if err != nil {
		return nil, err
	}
	db := stdlib.OpenDB(*cfg)
	pctx, cancel := context.WithTimeout(ctx, cfg.ConnectTimeout)
	defer cancel()
	if err := db.PingContext(pctx); err != nil {
		db.Close()
		return nil, mapErr(op, t.String(), err)
	}
	return db, nil
}

// pgQueryer numbers the ? placeholders of the shared SQL for PostgreSQL.
type pgQueryer struct{ q queryer }

func (p pgQueryer) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	return p.q.QueryContext(ctx, pgSQL.bind(q), args...)
}

// introspectPG reads the columns of the named tables (all when none is named) of the
// current schema, with their types, in one query.
func introspectPG(ctx context.Context, q queryer, tables ...string) (schemaInfo, error) {
	// format_type gives a name a CAST can use (an enum's own name, varchar(n), ...).
	query := `SELECT c.relname::text, a.attname::text, format_type(a.atttypid, a.atttypmod)
		FROM pg_catalog.pg_attribute a
		JOIN pg_catalog.pg_class c ON c.oid = a.attrelid
		JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
		AND a.attnum > 0 AND NOT a.attisdropped`
	var args []any
	if len(tables) > 0 {
		query += ` AND c.relname::text = ANY(?)`
		args = append(args, tables)
	}
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return schemaInfo{}, err
	}
	return scanColumns(rows, pgSQL)
}

// SQLSTATE codes steward acts on.
const (
	pgSerializationFailure = "40001"
	pgDeadlockDetected     = "40P01"
	pgLockNotAvailable     = "55P03"
)

// pgState is err's SQLSTATE ("" when it is no server error).
func pgState(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// pgRetryable reports a failure that retrying the whole transaction resolves: a
// serialization failure or a deadlock the server broke. A lock held past lock_timeout
// is busy (pgBusy), retried within the busy budget as SQLite's busy is.
func pgRetryable(err error) bool {
	s := pgState(err)
	return s == pgSerializationFailure || s == pgDeadlockDetected
}

func pgBusy(err error) bool { return pgState(err) == pgLockNotAvailable }

// mapPGErr maps a PostgreSQL driver error to a sentinel (nil when err is no
// PostgreSQL or network error). The detail keeps the server's message and SQLSTATE;
// pgx never puts the password in an error.
func mapPGErr(op, path string, err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		s := errPostgres
		switch {
		case pe.Code == pgLockNotAvailable:
			s = ErrBusy
		case strings.HasPrefix(pe.Code, "08"), strings.HasPrefix(pe.Code, "57P"), pe.Code == "53300":
			s = ErrUnreachable // connection exceptions, the server shutting down, too many connections
		case strings.HasPrefix(pe.Code, "28"), pe.Code == "3D000":
			s = ErrUnreachable // authentication failed, no such database
		}
		return &DBError{Op: op, Path: path, Err: s, Detail: pe.Message + " (SQLSTATE " + pe.Code + ")"}
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	switch {
	case errors.As(err, &ce), errors.As(err, &ne), errors.Is(err, driver.ErrBadConn),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), pgconn.Timeout(err) && !errors.Is(err, context.Canceled):
		return &DBError{Op: op, Path: path, Err: ErrUnreachable, Detail: err.Error()}
	}
	if strings.Contains(err.Error(), "conn closed") {
		return &DBError{Op: op, Path: path, Err: ErrUnreachable, Detail: err.Error()}
	}
	return nil
}
