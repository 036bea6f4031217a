package leases_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"steward/leases"
	"steward/leases/leaserec"
	"steward/leases/leasestest"
)

func errorsIs(err, target error) bool { return errors.Is(err, target) }

func exec(t *testing.T, path string, stmts ...string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

func fixture(t *testing.T) string {
	return leasestest.NewDB(t,
		[]leasestest.Session{{SessionID: "sess-a", Role: "author", PID: 10, Host: "h"}},
		[]leasestest.Lease{
			{LeaseID: "l-active", SessionID: "sess-a", Work: leasestest.Work(leaserec.KindIssue, 1),
				ExpiresAt: leaserec.FormatTime(now.Add(time.Minute)), OwnerHost: "h"},
			{LeaseID: "l-done", SessionID: "sess-a", Work: leasestest.Work(leaserec.KindPR, 2),
				Status: leaserec.StatusReleased, ExpiresAt: leaserec.FormatTime(now)},
		})
}

func snapshot(t *testing.T, path string) *leases.Snapshot {
	t.Helper()
	r, err := leases.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	s, err := r.Snapshot(context.Background(), leases.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSnapshotOK(t *testing.T) {
	t.Parallel()
	s := snapshot(t, fixture(t))
	if s.SchemaVersion != "5" || s.MetaHealth.Status != leaserec.HealthOK || s.LeasesHealth.Status != leaserec.HealthOK ||
		s.SessionsHealth.Status != leaserec.HealthOK || s.AssignmentsHealth.Status != leaserec.HealthOK {
		t.Fatalf("health %+v", s)
	}
	if len(s.Sessions) != 1 || len(s.WorkItems) != 2 || len(s.Leases) != 2 || s.Leases[0].LeaseID != "l-active" ||
		s.Leases[0].Work.Number != 1 || s.Leases[1].Work.Kind != leaserec.KindPR {
		t.Fatalf("rows %+v", s)
	}
	if none := snapshotOpt(t, fixture(t), leases.ReadOptions{RecentTerminal: -1}); len(none.Leases) != 1 {
		t.Fatalf("recent terminal -1: %d", len(none.Leases))
	}
}

func snapshotOpt(t *testing.T, path string, o leases.ReadOptions) *leases.Snapshot {
	r, err := leases.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	s, err := r.Snapshot(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestDegradedSchemas(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		stmts   []string
		section func(*leases.Snapshot) leaserec.Health
		status  leaserec.HealthStatus
		reason  string
		check   func(*leases.Snapshot) bool
	}{
		{"missing enrichment column", []string{"ALTER TABLE leases DROP COLUMN owner_host"},
			// The note says what the absence costs.
			func(s *leases.Snapshot) leaserec.Health { return s.LeasesHealth }, leaserec.HealthOK,
			"column leases.owner_host is absent: leases are judged on the DB's host",
			func(s *leases.Snapshot) bool { return len(s.Leases) == 2 }},
		{"missing key column", []string{"ALTER TABLE sessions DROP COLUMN status"},
			func(s *leases.Snapshot) leaserec.Health { return s.SessionsHealth }, leaserec.HealthDegraded, "sessions.status",
			func(s *leases.Snapshot) bool { return len(s.Sessions) == 1 }},
		{"missing work_items table", []string{"PRAGMA foreign_keys=OFF", "DROP TABLE work_items"},
			func(s *leases.Snapshot) leaserec.Health { return s.LeasesHealth }, leaserec.HealthDegraded, "no issue/PR scope",
			func(s *leases.Snapshot) bool {
				return len(s.Leases) == 2 && s.WorkItemsHealth.Status == leaserec.HealthUnavailable
			}},
		{"missing assignments table", []string{"DROP TABLE assignments"},
			func(s *leases.Snapshot) leaserec.Health { return s.AssignmentsHealth }, leaserec.HealthUnavailable, "table assignments is absent",
			func(s *leases.Snapshot) bool { return len(s.Leases) == 2 }},
		{"missing required column", []string{"ALTER TABLE sessions RENAME COLUMN session_id TO sid"},
			func(s *leases.Snapshot) leaserec.Health { return s.SessionsHealth }, leaserec.HealthUnavailable, "sessions.session_id",
			func(s *leases.Snapshot) bool { return s.Sessions == nil }},
		{"unknown schema version", []string{"UPDATE schema_meta SET value='99' WHERE key='schema_version'"},
			func(s *leases.Snapshot) leaserec.Health { return s.MetaHealth }, leaserec.HealthOK, "\"99\"",
			func(s *leases.Snapshot) bool { return s.SchemaVersion == "99" }},
		{"missing schema_meta", []string{"DROP TABLE schema_meta"},
			func(s *leases.Snapshot) leaserec.Health { return s.MetaHealth }, leaserec.HealthOK, "schema_meta is absent",
			func(s *leases.Snapshot) bool { return true }},
		{"undecodable values", []string{"UPDATE leases SET expires_at='soon', allowed_actions='[1]' WHERE lease_id='l-active'"},
			func(s *leases.Snapshot) leaserec.Health { return s.LeasesHealth }, leaserec.HealthOK, "undecodable",
			func(s *leases.Snapshot) bool {
				return s.Leases[0].ExpiresAt.State == leaserec.TimeUnparseable && len(s.Leases[0].Problems) == 2
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			path := fixture(t)
			exec(t, path, c.stmts...)
			s := snapshot(t, path)
			h := c.section(s)
			// Reasons say what makes the read incomplete; notes what it lacks without that.
			said := strings.Join(h.Reasons, "|")
			if c.status == leaserec.HealthOK {
				said = strings.Join(h.Notes, "|")
			}
			if h.Status != c.status || !strings.Contains(said, c.reason) || !c.check(s) {
				t.Fatalf("health %+v snapshot %+v", h, s)
			}
		})
	}
}

func TestOpenUnavailable(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.sqlite3")
	_, err := leases.OpenReadOnly(missing)
	if !errors.Is(err, leases.ErrNoDB) {
		t.Fatalf("missing: %v", err)
	}
	if _, statErr := os.Stat(missing); !os.IsNotExist(statErr) {
		t.Fatal("OpenReadOnly created the file")
	}
	if h := leases.HealthFromError(err); h.Status != leaserec.HealthUnavailable || !strings.Contains(h.Reasons[0], "missing authority") {
		t.Fatalf("health %+v", h)
	}
	junk := filepath.Join(dir, "junk.sqlite3")
	if err := os.WriteFile(junk, []byte(strings.Repeat("this is not a database\n", 200)), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = leases.OpenReadOnly(junk)
	var de *leases.DBError
	if !errors.Is(err, leases.ErrNotSQLite) || !errors.As(err, &de) || de.Path != junk {
		t.Fatalf("junk: %v", err)
	}
	if h := leases.HealthFromError(err); h.Status != leaserec.HealthUnavailable || !strings.Contains(h.Reasons[0], "not a SQLite") {
		t.Fatalf("health %+v", h)
	}
	if _, err := leases.OpenReadWrite(junk, leases.StoreOptions{}); !errors.Is(err, leases.ErrNotSQLite) {
		t.Fatalf("rw junk: %v", err)
	}
	if err := leases.Migrate(junk); !errors.Is(err, leases.ErrNotSQLite) {
		t.Fatalf("migrate junk: %v", err)
	}
}

func TestMigrateIdempotentAndForeign(t *testing.T) {
	t.Parallel()
	path := fixture(t)
	if err := leases.Migrate(path); err != nil {
		t.Fatalf("re-migrate: %v", err)
	}
	if s := snapshot(t, path); len(s.Leases) != 2 || s.Meta["steward_migration"] != "3" {
		t.Fatalf("after re-migrate %+v", s.Meta)
	}
	foreign := filepath.Join(t.TempDir(), "cp.sqlite3")
	exec(t, foreign, "CREATE TABLE schema_meta(key TEXT, value TEXT)", "INSERT INTO schema_meta VALUES('schema_version','4')")
	if err := leases.Migrate(foreign); !errors.Is(err, leases.ErrForeignSchema) {
		t.Fatalf("foreign: %v", err)
	}
	// A foreign schema opens for transitions (nothing is written by opening), and each
	// transition refuses what it cannot do on it.
	st, err := leases.OpenReadWrite(foreign, leases.StoreOptions{})
	if err != nil {
		t.Fatalf("rw on foreign schema: %v", err)
	}
	defer st.Close()
	if out, err := st.ExpireSweep(context.Background(), now); err != nil || out.Code != leases.CodeSchemaUnsupported {
		t.Fatalf("sweep on foreign schema: %+v %v", out, err)
	}
}

func TestEventsCursorAndDataVersion(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path, s := newStore(t, leases.StoreOptions{})
	r, err := leases.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	v0, err := r.DataVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := r.DataVersion(ctx); v != v0 {
		t.Fatal("data_version moved without a commit")
	}
	mustClaim(t, s, "a", 1, now)
	s.Claim(ctx, claimReq("b", 1), now)
	if v, _ := r.DataVersion(ctx); v == v0 {
		t.Fatal("data_version did not move after a commit")
	}
	ev, h, err := r.EventsSince(ctx, 0, 0)
	if err != nil || h.Status != leaserec.HealthOK || len(ev) != 2 || ev[0].EventType != "lease.claim" || ev[1].EventType != "claim.refused" {
		t.Fatalf("events %+v %+v %v", ev, h, err)
	}
	more, _, _ := r.EventsSince(ctx, ev[1].EventID, 0)
	if len(more) != 0 {
		t.Fatalf("past cursor: %+v", more)
	}
	one, _, _ := r.EventsSince(ctx, ev[0].EventID, 0)
	if len(one) != 1 || one[0].EventID != ev[1].EventID {
		t.Fatalf("cursor: %+v", one)
	}
	lim, _, _ := r.EventsSince(ctx, 0, 1)
	if len(lim) != 1 {
		t.Fatalf("limit: %+v", lim)
	}
	// The events and the version they were read at, in one read: the same events, the
	// version DataVersion gives now, and More when the limit was reached.
	v1, _ := r.DataVersion(ctx)
	at, err := r.EventsAtVersion(ctx, 0, 10)
	if err != nil || at.DataVersion != v1 || at.More || at.Health.Status != leaserec.HealthOK || len(at.Events) != 2 ||
		at.Events[0].EventID != ev[0].EventID || at.Events[1].EventID != ev[1].EventID {
		t.Fatalf("events at version: %+v %v; want the 2 events at version %d", at, err, v1)
	}
	if at, err := r.EventsAtVersion(ctx, ev[0].EventID, 1); err != nil || len(at.Events) != 1 || !at.More ||
		at.Events[0].EventID != ev[1].EventID {
		t.Fatalf("events at version past the first, limit 1: %+v %v", at, err)
	}
	// Seed-shaped events table: no session_id/detail_json → ok with a note, rows read.
	p2 := fixture(t)
	exec(t, p2, "ALTER TABLE events DROP COLUMN session_id", "ALTER TABLE events DROP COLUMN detail_json",
		"INSERT INTO events(work_item_id, event_type, message, created_at) VALUES(1, 'lease.renew', 'lease renewed', '2026-07-23T10:00:00Z')")
	r2, _ := leases.OpenReadOnly(p2)
	defer r2.Close()
	ev, h, err = r2.EventsSince(ctx, 0, 0)
	if err != nil || h.Status != leaserec.HealthOK || !strings.Contains(strings.Join(h.Notes, "|"), "events.session_id") ||
		len(ev) != 1 || ev[0].Message != "lease renewed" {
		t.Fatalf("seed events %+v %+v %v", ev, h, err)
	}
}

func TestLeaseByIDAndWorkItem(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r, err := leases.OpenReadOnly(fixture(t))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	l, found, err := r.LeaseByID(ctx, "l-active")
	if err != nil || !found || l.Work.Number != 1 || l.OwnerHost != "h" {
		t.Fatalf("by id %+v %v %v", l, found, err)
	}
	if _, found, err := r.LeaseByID(ctx, "nope"); found || err != nil {
		t.Fatalf("absent: %v %v", found, err)
	}
	ls, err := r.LeasesForWorkItem(ctx, leasestest.Work(leaserec.KindIssue, 1))
	if err != nil || len(ls) != 1 || ls[0].LeaseID != "l-active" {
		t.Fatalf("by item %+v %v", ls, err)
	}
	if ls, _ := r.LeasesForWorkItem(ctx, leasestest.Work(leaserec.KindPR, 2)); len(ls) != 0 {
		t.Fatalf("released lease listed as live: %+v", ls)
	}
}

// TestHasColumn: a verifier asks whether the DB can carry a mark before it reads the
// absence of one as proof — a column present is said so, a dropped column or a table
// that is not there is not.
func TestHasColumn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path, _ := newStore(t, leases.StoreOptions{})
	ask := func(table, col string) bool {
		t.Helper()
		r, err := leases.OpenReadOnly(path)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		ok, err := r.HasColumn(ctx, table, col)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if !ask("events", "detail_json") || !ask("leases", "lease_id") {
		t.Fatal("steward's own columns are not found")
	}
	if ask("events", "no_such_column") || ask("no_such_table", "lease_id") {
		t.Fatal("a column that is not there is found")
	}
	exec(t, path, "ALTER TABLE events DROP COLUMN detail_json")
	if ask("events", "detail_json") {
		t.Fatal("a dropped column is still found")
	}
}
