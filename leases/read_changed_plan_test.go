package leases

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"steward/leases/leaserec"
)

// TestScopeQueriesUseIndexes checks the query plans behind ReadScope: every
// lookup is a SEARCH through an index, never a SCAN of the table, so the cost
// of a scoped read does not grow with the table.
func TestScopeQueriesUseIndexes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cp.sqlite3")
	if err := Migrate(path); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	info, err := introspect(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		table, cond, key string
		want             []column
		args             []any
	}{
		{"leases", "", "lease_id", leaseCols, []any{"a", "b"}},
		{"leases", activeCond(sqliteSQL), "work_item_id", leaseCols, []any{1, 2}},
		{"sessions", "", "session_id", sessionCols, []any{"s1", "s2"}},
		{"work_items", "", "work_item_id", workItemCols, []any{1, 2}},
	} {
		var h leaserec.Health
		list, _, ok := selectList(info, c.table, c.want, &h)
		if !ok {
			t.Fatalf("%s: %v", c.table, h)
		}
		q := scopeQuery(list, c.table, c.cond, c.key, len(c.args))
		rows, err := db.QueryContext(ctx, "EXPLAIN QUERY PLAN "+q, c.args...)
		if err != nil {
			t.Fatal(err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, notused int
			var detail string
			if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		all := strings.Join(plan, "; ")
		if strings.Contains(all, "SCAN "+c.table) || !strings.Contains(all, "SEARCH "+c.table) {
			t.Errorf("%s by %s: plan %q scans the table", c.table, c.key, all)
		}
	}
}

// introspectTables sees what introspect sees, for the tables it is asked
// about: a dropped column is absent, a dropped table is absent.
func TestIntrospectTablesMatchesIntrospect(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cp.sqlite3")
	if err := Migrate(path); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range []string{`ALTER TABLE events DROP COLUMN detail_json`, `DROP TABLE sessions`} {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	all, err := introspect(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	some, err := introspectTables(ctx, db, "events", "sessions", "leases")
	if err != nil {
		t.Fatal(err)
	}
	if len(some.cols) != 2 || some.hasTable("sessions") || some.has("events", "detail_json") || !some.has("events", "event_id") {
		t.Fatalf("introspectTables = %v", some.cols)
	}
	for _, table := range []string{"events", "leases"} {
		if len(some.cols[table]) != len(all.cols[table]) {
			t.Errorf("%s: %v, introspect says %v", table, some.cols[table], all.cols[table])
		}
		for c, typ := range all.cols[table] {
			if got, ok := some.cols[table][c]; !ok || got != typ {
				t.Errorf("%s.%s missing or typed %q, want %q", table, c, got, typ)
			}
		}
	}
}
