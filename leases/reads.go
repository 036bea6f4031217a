package leases

import (
	"context"
	"database/sql"
)

// reads is the read side both backends share: every Reader method but those that tell
// a commit happened (versioned). The SQL is written once, in SQLite's placeholders; the
// dialect supplies what differs.
type reads struct {
	db   *sql.DB
	d    dialect
	path string // the location shown in errors (a PostgreSQL URL without its password)
	// version is the backend's commit counter, recorded in a Snapshot.
	version func(ctx context.Context) (int64, error)
}

// q adapts a handle to the dialect (numbered placeholders on PostgreSQL).
func (r *reads) q(x queryer) queryer {
	if r.d.pg {
		return pgQueryer{x}
	}
	return x
}

// introspect reads the columns of the named tables (every table when none is named).
func (r *reads) introspect(ctx context.Context, q queryer, tables ...string) (schemaInfo, error) {
	switch {
	case r.d.pg:
		return introspectPG(ctx, q, tables...)
	case len(tables) == 0:
		return introspect(ctx, q)
	}
	return introspectTables(ctx, q, tables...)
}

// beginRead starts a read-only transaction: one consistent snapshot of the DB
// (REPEATABLE READ on PostgreSQL; SQLite's read transactions are snapshots already).
func (r *reads) beginRead(ctx context.Context) (*sql.Tx, error) {
	opt := &sql.TxOptions{ReadOnly: true}
	if r.d.pg {
		opt.Isolation = sql.LevelRepeatableRead
	}
	return r.db.BeginTx(ctx, opt)
}

// Path returns the DB's location as it may be shown.
func (r *reads) Path() string { return r.path }
