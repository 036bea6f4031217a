package leases

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// SchemaVersion is the seed-level schema_version steward's migrations
// produce (the seed's v5 table set, with session_checkpoints).
const SchemaVersion = "5"

// knownSchemaVersions are the schema_meta.schema_version values readers
// understand; any other value degrades the meta section.
var knownSchemaVersions = []string{"4", "5"}

// Meta keys steward writes in schema_meta.
const (
	metaSchemaVersion    = "schema_version"
	metaStewardMigration = "steward_migration"
	metaArchitecture     = "architecture"
)

type migration struct {
	n    int
	name string
	sql  string
}

func migrations() ([]migration, error) { return readMigrations(migrationFS, "migrations") }

// readMigrations reads the numbered .sql files of dir in fsys, in order.
func readMigrations(fsys embed.FS, dir string) ([]migration, error) {
	ents, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, err
	}
	var out []migration
	for _, e := range ents {
		num, _, ok := strings.Cut(e.Name(), "_")
		n, err := strconv.Atoi(num)
		if !ok || err != nil {
			return nil, fmt.Errorf("migration %s: name must start with a number", e.Name())
		}
		b, err := fsys.ReadFile(dir + "/" + e.Name())
		if err != nil {
			return nil, err
		}
		out = append(out, migration{n: n, name: e.Name(), sql: string(b)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].n < out[j].n })
	return out, nil
}

func migrate(ctx context.Context, db *sql.DB, path string) error {
	const op = "migrate"
	ms, err := migrations()
	if err != nil {
		return &DBError{Op: op, Path: path, Err: err}
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return mapErr(op, path, err)
	}
	defer tx.Rollback()
	cur, foreign, err := currentMigration(ctx, tx)
	if err != nil {
		return mapErr(op, path, err)
	}
	if foreign {
		return &DBError{Op: op, Path: path, Err: ErrForeignSchema}
	}
	for _, m := range ms {
		if m.n <= cur {
			continue
		}
		if _, err := tx.ExecContext(ctx, m.sql); err != nil {
			return mapErr(op+" "+m.name, path, err)
		}
		cur = m.n
	}
	meta := [][2]string{
		{metaSchemaVersion, SchemaVersion},
		{metaStewardMigration, strconv.Itoa(cur)},
		{metaArchitecture, "DB coordinates exclusive ownership; lock files and Gitea bridge it (steward fixture)"},
	}
	for _, kv := range meta {
		if _, err := tx.ExecContext(ctx,
			`INSERT INTO schema_meta(key, value) VALUES(?, ?)
			 ON CONFLICT(key) DO UPDATE SET value = excluded.value`, kv[0], kv[1]); err != nil {
			return mapErr(op, path, err)
		}
	}
	return mapErr(op, path, tx.Commit())
}

// currentMigration returns the applied steward migration number; foreign is
// true when tables exist that steward's migrations did not record.
func currentMigration(ctx context.Context, tx *sql.Tx) (cur int, foreign bool, err error) {
	var n int
	if err := tx.QueryRowContext(ctx,
		`SELECT count(*) FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'`).Scan(&n); err != nil {
		return 0, false, err
	}
	if n == 0 {
		return 0, false, nil
	}
	var v string
	err = tx.QueryRowContext(ctx, `SELECT value FROM schema_meta WHERE key = ?`, metaStewardMigration).Scan(&v)
	if err != nil {
		return 0, true, nil
	}
	cur, err = strconv.Atoi(v)
	if err != nil {
		return 0, true, nil
	}
	return cur, false, nil
}

// queryer is what introspection needs (a *sql.DB, *sql.Conn or *sql.Tx).
type queryer interface {
	QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error)
}

// schemaInfo is what a DB's schema holds, as introspected: each table's columns with
// their types (PostgreSQL's data_type; SQLite's declared type, often empty), and the
// SQL dialect of the backend it was read from.
type schemaInfo struct {
	dialect
	cols map[string]map[string]string
}

func newSchemaInfo(d dialect) schemaInfo {
	return schemaInfo{dialect: d, cols: map[string]map[string]string{}}
}

// has reports whether table has col (false when the table is absent).
func (i schemaInfo) has(table, col string) bool { _, ok := i.cols[table][col]; return ok }

// hasTable reports whether the table exists.
func (i schemaInfo) hasTable(table string) bool { _, ok := i.cols[table]; return ok }

// add records a column.
func (i schemaInfo) add(table, col, typ string) {
	if i.cols[table] == nil {
		i.cols[table] = map[string]string{}
	}
	i.cols[table][col] = typ
}

// scanColumns collects the (table, column, type) rows of a query over the catalogue
// into the schema of dialect d, and closes them: the one scan of both backends'
// introspection.
func scanColumns(rows *sql.Rows, d dialect) (schemaInfo, error) {
	defer rows.Close()
	info := newSchemaInfo(d)
	for rows.Next() {
		var t, c, typ string
		if err := rows.Scan(&t, &c, &typ); err != nil {
			return schemaInfo{}, err
		}
		info.add(t, c, typ)
	}
	return info, rows.Err()
}

// introspect reads every table's columns with PRAGMA table_info.
func introspect(ctx context.Context, q queryer) (schemaInfo, error) {
	rows, err := q.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type='table'`)
	if err != nil {
		return schemaInfo{}, err
	}
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return schemaInfo{}, err
		}
		names = append(names, n)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return schemaInfo{}, err
	}
	info := newSchemaInfo(sqliteSQL)
	for _, n := range names {
		cols, err := q.QueryContext(ctx, `SELECT name, type FROM pragma_table_info(?)`, n)
		if err != nil {
			return schemaInfo{}, err
		}
		info.cols[n] = map[string]string{}
		for cols.Next() {
			var c, typ string
			if err := cols.Scan(&c, &typ); err != nil {
				cols.Close()
				return schemaInfo{}, err
			}
			info.add(n, c, typ)
		}
		cols.Close()
		if err := cols.Err(); err != nil {
			return schemaInfo{}, err
		}
	}
	return info, nil
}
