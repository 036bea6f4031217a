package leases_test

import (
	"context"
	"database/sql"
	"errors"
	"testing"

	"steward/leases"
	"steward/leases/pgtest"
)

// TestPGInitRefusesAnUnreadableMigrationRecord: a schema whose schema_meta records
// steward's migration as something other than a number is not one steward can migrate:
// InitPG refuses it as a foreign schema and leaves the record as it was — it neither
// re-runs the migrations over it nor writes a migration number of its own.
func TestPGInitRefusesAnUnreadableMigrationRecord(t *testing.T) {
	ctx := context.Background()
	url := pgtest.NewDB(t)
	tg := leases.Target{Loc: url}
	if _, err := leases.InitPG(ctx, tg); err != nil {
		t.Fatal(err)
	}
	pgtest.Exec(t, url, `UPDATE schema_meta SET value = 'seven' WHERE key = 'steward_migration'`)
	if n, err := leases.InitPG(ctx, tg); !errors.Is(err, leases.ErrForeignSchema) {
		t.Fatalf("init over a migration recorded as %q: %d %v, want %v", "seven", n, err, leases.ErrForeignSchema)
	}
	raw, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var v string
	if err := raw.QueryRow(`SELECT value FROM schema_meta WHERE key = 'steward_migration'`).Scan(&v); err != nil ||
		v != "seven" {
		t.Fatalf("the refused init left the record %q (%v), want %q", v, err, "seven")
	}
}
