package leases

import (
	"context"
	"database/sql"
	"time"

	"steward/leases/leaserec"
)

// PGReader reads a control-plane DB on PostgreSQL: the same reads as on SQLite (by
// column name, each section with its Health), each in one REPEATABLE READ, read-only
// transaction on connections whose default is read-only. It never creates, migrates or
// writes the database. Safe for concurrent use.
type PGReader struct {
	reads
	t Target
}

// OpenPGReader opens the PostgreSQL DB t names for reading and proves it reachable. An
// unreachable server (or one refusing the login) is ErrUnreachable: missing authority,
// never an empty inventory.
func OpenPGReader(ctx context.Context, t Target) (*PGReader, error) {
	db, err := openPG(ctx, "open read-only", t, true, busyTimeout)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(4)
	db.SetMaxIdleConns(2)
	db.SetConnMaxIdleTime(5 * time.Minute)
	r := &PGReader{reads: reads{db: db, d: pgSQL, path: t.String()}, t: t}
	r.version = r.DataVersion
	return r, nil
}

// Close releases the Reader's connections.
func (r *PGReader) Close() error { return r.db.Close() }

// DataVersion is a number that moves with every commit that wrote anything: the
// server's WAL insert position (on a standby, its replay position). It moves for other
// writes too (other databases of the cluster, maintenance), so a watcher may re-read
// for nothing, but it never stays still across a commit. Compare it only with values
// of the same server.
func (r *PGReader) DataVersion(ctx context.Context) (int64, error) {
	var v int64
	err := r.db.QueryRowContext(ctx, `SELECT CASE WHEN pg_is_in_recovery()
		THEN pg_wal_lsn_diff(pg_last_wal_replay_lsn(), '0/0')
		ELSE pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0') END::bigint`).Scan(&v)
	return v, mapErr("data_version", r.path, err)
}

// EventsAtVersion reads DataVersion and then, in one read transaction, up to limit
// events past cursor. The version is read first, so every commit it counts is in the
// events read (a later one moves it again): a version that moved with no new event is
// a commit that wrote no event, or no commit at all.
func (r *PGReader) EventsAtVersion(ctx context.Context, cursor int64, limit int) (VersionedEvents, error) {
	version, err := r.DataVersion(ctx)
	if err != nil {
		return VersionedEvents{}, err
	}
	tx, err := r.beginRead(ctx)
	if err != nil {
		return VersionedEvents{}, mapErr("events", r.path, err)
	}
	defer tx.Rollback()
	out, err := r.eventsAfter(ctx, r.q(tx), cursor, limit)
	out.DataVersion = version
	return out, mapErr("events", r.path, err)
}

// Replaced is false: a server database is not a file another can be renamed over.
func (r *PGReader) Replaced() bool { return false }

// Clock reads the database's clock: on PostgreSQL the time every transition fences
// against, so a preview judges expiry as the apply will.
func (r *PGReader) Clock(ctx context.Context) (time.Time, error) {
	return dbClock(ctx, r.db, r.path)
}

// dbClock reads clock_timestamp() of the server through q.
func dbClock(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}, path string) (time.Time, error) {
	var s string
	row := q.QueryRowContext(ctx, `SELECT to_char(clock_timestamp() AT TIME ZONE 'UTC', `+pgTimeFormat+`)`)
	if err := row.Scan(&s); err != nil {
		return time.Time{}, mapErr("clock", path, err)
	}
	t, err := time.Parse(leaserec.TimeLayout, s)
	if err != nil {
		return time.Time{}, &DBError{Op: "clock", Path: path, Err: errPostgres, Detail: "clock_timestamp() read as " + s}
	}
	return t, nil
}
