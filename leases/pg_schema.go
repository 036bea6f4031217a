package leases

import (
	"context"
	"database/sql"
	"embed"
	"strconv"
)

//go:embed pgmigrations/*.sql
var pgMigrationFS embed.FS

// initLockKey is the advisory lock InitPG holds while it migrates, so that two
// steward init runs against one database apply each migration once.
const initLockKey = 0x5374657761726431 // "Steward1"

// InitPG creates steward's control-plane schema in the PostgreSQL database t names, or
// migrates one steward created to the latest version (steward init --db). It is the
// only code that changes a PostgreSQL schema: a database holding tables steward's
// migrations did not record is refused with ErrForeignSchema before anything is
// written, and no other command ever creates or alters a table. It returns the
// migration number the database is at.
func InitPG(ctx context.Context, t Target) (int, error) {
	const op = "init"
	db, err := openPG(ctx, op, t, false, busyTimeout)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	ms, err := readMigrations(pgMigrationFS, "pgmigrations")
	if err != nil {
		return 0, &DBError{Op: op, Path: t.String(), Err: err}
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return 0, mapErr(op, t.String(), err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(initLockKey)); err != nil {
		return 0, mapErr(op, t.String(), err)
	}
	var schema sql.NullString
	if err := tx.QueryRowContext(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		return 0, mapErr(op, t.String(), err)
	}
	if !schema.Valid {
		return 0, &DBError{Op: op, Path: t.String(), Err: errPostgres,
			Detail: "no schema to create the tables in: create the schema the URL's search_path names, or name an existing one"}
	}
	cur, foreign, err := currentPGMigration(ctx, tx)
	if err != nil {
		return 0, mapErr(op, t.String(), err)
	}
	if foreign {
		return 0, &DBError{Op: op, Path: t.String(), Err: ErrForeignSchema,
			Detail: "schema " + strconv.Quote(schema.String) + " holds tables steward's migrations did not record; " +
				"steward reads such a database as it is and never alters it — name an empty database or schema to initialise"}
	}
	for _, m := range ms {
		if m.n <= cur {
			continue
		}
		if _, err := tx.ExecContext(ctx, m.sql); err != nil {
			return 0, mapErr(op+" "+m.name, t.String(), err)
		}
		cur = m.n
	}
	for _, kv := range [][2]string{
		{metaSchemaVersion, SchemaVersion},
		{metaStewardMigration, strconv.Itoa(cur)},
		{metaArchitecture, "DB coordinates exclusive ownership across hosts (PostgreSQL); lock files and Gitea bridge it"},
	} {
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_meta(key, value) VALUES($1, $2)
			ON CONFLICT (key) DO UPDATE SET value = excluded.value`, kv[0], kv[1]); err != nil {
			return 0, mapErr(op, t.String(), err)
		}
	}
	return cur, mapErr(op, t.String(), tx.Commit())
}

// currentPGMigration returns the applied steward migration number of the current
// schema; foreign is true when it holds tables steward's migrations did not record.
func currentPGMigration(ctx context.Context, tx *sql.Tx) (cur int, foreign bool, err error) {
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM information_schema.tables
		WHERE table_schema = current_schema()`).Scan(&n); err != nil {
		return 0, false, err
	}
	if n == 0 {
		return 0, false, nil
	}
	var has bool
	row := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM information_schema.columns
		WHERE table_schema = current_schema() AND table_name = 'schema_meta' AND column_name = 'value')`)
	if err := row.Scan(&has); err != nil || !has {
		return 0, true, err
	}
	var v string
	row = tx.QueryRowContext(ctx, `SELECT value FROM schema_meta WHERE key = $1`, metaStewardMigration)
	if err := row.Scan(&v); err != nil {
		if err == sql.ErrNoRows {
			return 0, true, nil
		}
		return 0, false, err
	}
	cur, err = strconv.Atoi(v)
	if err != nil {
		return 0, true, nil
	}
	return cur, false, nil
}
