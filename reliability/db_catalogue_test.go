package reliability_test

import (
	"database/sql"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"steward/leases/leaserec"
	"steward/leases/leasestest"
	"steward/model"
)

// dbExpect is what the snapshot must say about one hostile DB state.
type dbExpect struct {
	// status is the DB source's status; reason a text its reason must contain.
	status model.Status
	reason string
	// evidence: some claim or orphan carries evidence containing this.
	evidence string
	// claims: at least this many claims are still shown (rows that could be read).
	claims int
}

// sqlDB opens the workspace DB for raw fixture writes (test setup, as a foreign writer).
func sqlDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(5000)")
	must(t, err)
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return db
}

func execAll(t *testing.T, db *sql.DB, stmts ...string) {
	t.Helper()
	for _, q := range stmts {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// oneLease gives the workspace one active lease that expires an hour after statusNow.
func (w *workspace) oneLease(t *testing.T) {
	t.Helper()
	leasestest.Insert(t, w.ws.DBPath, []leasestest.Session{{SessionID: "s1", Role: "author"}},
		[]leasestest.Lease{{LeaseID: "L1", SessionID: "s1", Role: "author", TaskClass: "author_issue_work",
			Work: leasestest.Work(leaserec.KindIssue, 5), CreatedAt: "2026-07-24T05:50:00Z", ExpiresAt: "2026-07-24T07:00:00Z"}})
}

// hostileText is put into every text column of the hostile-rows case.
const hostileText = "\x1b[2J\x1b]0;pwned\x07\x1b]52;c;ZXZpbA==\x07\u202eevil\u202c\u2066\u2069\u009b31m"

var dbCases = map[string]struct {
	make func(t *testing.T, w *workspace)
	want dbExpect
}{
	"missing-file": {func(t *testing.T, w *workspace) { must(t, os.Remove(w.ws.DBPath)) },
		dbExpect{status: model.StatusUnavailable, reason: "missing authority"}},
	"not-sqlite": {func(t *testing.T, w *workspace) {
		writeFile(t, w.ws.DBPath, []byte("this is a text file, not a database\n"))
	}, dbExpect{status: model.StatusUnavailable, reason: "not a SQLite database"}},
	"zero-bytes": {func(t *testing.T, w *workspace) { writeFile(t, w.ws.DBPath, nil) },
		dbExpect{status: model.StatusUnavailable, reason: "leases"}},
	"truncated-sqlite": {func(t *testing.T, w *workspace) {
		w.oneLease(t)
		db := sqlDB(t, w.ws.DBPath)
		execAll(t, db, "PRAGMA wal_checkpoint(TRUNCATE)", "PRAGMA journal_mode=DELETE")
		db.Close()
		b, err := os.ReadFile(w.ws.DBPath)
		must(t, err)
		writeFile(t, w.ws.DBPath, b[:len(b)/3])
	}, dbExpect{status: model.StatusUnavailable, reason: "malformed"}},
	"directory": {func(t *testing.T, w *workspace) {
		must(t, os.Remove(w.ws.DBPath))
		must(t, os.Mkdir(w.ws.DBPath, 0o700))
	}, dbExpect{status: model.StatusUnavailable, reason: "is a directory"}},
	"fifo": {func(t *testing.T, w *workspace) {
		must(t, os.Remove(w.ws.DBPath))
		must(t, syscall.Mkfifo(w.ws.DBPath, 0o600))
	}, dbExpect{status: model.StatusUnavailable, reason: "not a regular file"}},
	"link-to-etc-passwd": {func(t *testing.T, w *workspace) {
		must(t, os.Remove(w.ws.DBPath))
		must(t, os.Symlink("/etc/passwd", w.ws.DBPath))
	}, dbExpect{status: model.StatusUnavailable, reason: "not a SQLite database"}},
	"unknown-schema-version": {func(t *testing.T, w *workspace) {
		w.oneLease(t)
		execAll(t, sqlDB(t, w.ws.DBPath), "UPDATE schema_meta SET value = '99' WHERE key = 'schema_version'")
	}, dbExpect{status: model.StatusOK, reason: "99", claims: 1}},
	"no-schema-meta": {func(t *testing.T, w *workspace) {
		w.oneLease(t)
		execAll(t, sqlDB(t, w.ws.DBPath), "DROP TABLE schema_meta")
	}, dbExpect{status: model.StatusOK, reason: "schema_meta", claims: 1}},
	"no-leases-table": {func(t *testing.T, w *workspace) {
		w.oneLease(t)
		execAll(t, sqlDB(t, w.ws.DBPath), "DROP TABLE assignments", "DROP TABLE leases")
	}, dbExpect{status: model.StatusUnavailable, reason: "leases"}},
	"no-tables-at-all": {func(t *testing.T, w *workspace) {
		must(t, os.Remove(w.ws.DBPath))
		execAll(t, sqlDB(t, w.ws.DBPath), "CREATE TABLE unrelated (x)")
	}, dbExpect{status: model.StatusUnavailable, reason: "leases"}},
	"no-events-table": {func(t *testing.T, w *workspace) {
		w.oneLease(t)
		execAll(t, sqlDB(t, w.ws.DBPath), "DROP TABLE events")
	}, dbExpect{status: model.StatusDegraded, reason: "events", claims: 1}},
	"no-expires-at-column": {func(t *testing.T, w *workspace) {
		w.oneLease(t)
		execAll(t, sqlDB(t, w.ws.DBPath), "DROP INDEX leases_one_active_per_item", "ALTER TABLE leases DROP COLUMN expires_at")
	}, dbExpect{status: model.StatusOK, reason: "expires_at", claims: 1}},
	"garbage-wal": {func(t *testing.T, w *workspace) {
		w.oneLease(t)
		db := sqlDB(t, w.ws.DBPath)
		execAll(t, db, "PRAGMA wal_checkpoint(TRUNCATE)")
		db.Close()
		writeFile(t, w.ws.DBPath+"-wal", []byte(strings.Repeat("garbage!", 1024)))
	}, dbExpect{status: model.StatusOK, claims: 1}},
	"hostile-rows": {func(t *testing.T, w *workspace) {
		w.oneLease(t)
		h := "'" + strings.ReplaceAll(hostileText, "'", "''") + "'"
		execAll(t, sqlDB(t, w.ws.DBPath),
			"INSERT INTO sessions (session_id, role, profile, pid, host, status, started_at) VALUES ('s-h'||"+h+", "+h+", "+h+", 'abc', "+h+", 'active', "+h+")",
			"INSERT INTO work_items (remote, org, repo, work_kind, work_number, title) VALUES ("+h+", "+h+", "+h+", 'issue', -7, "+h+")",
			"INSERT INTO work_items (remote, org, repo, work_kind, work_number, title) VALUES ('origin', 'acme', 'widgets', 'issue', 9223372036854775807, 'max')",
			// NaN expiry, a pid that is not a number, provenance that is not JSON, a worktree outside.
			"INSERT INTO leases (lease_id, work_item_id, session_id, role, task_class, status, created_at, expires_at, owner_pid, owner_host, worktree_path, provenance_json, allowed_actions) "+
				"VALUES ('L-nan'||"+h+", (SELECT work_item_id FROM work_items WHERE work_number = -7), 's-h'||"+h+", "+h+", "+h+", 'active', '0001-01-01T00:00:00Z', 'NaN', 'abc', "+h+", '../../etc', '{not json', 'commit, push')",
			// a huge pid, a far-future expiry, a naive timestamp and invalid UTF-8 in a text column.
			"INSERT INTO leases (lease_id, work_item_id, session_id, status, created_at, expires_at, last_heartbeat_at, owner_pid, worktree_path, phase) "+
				"VALUES ('L-max', (SELECT work_item_id FROM work_items WHERE work_number = 9223372036854775807), 's1', 'active', '2026-07-24 05:00:00', '9999-12-31T23:59:59Z', '2026-07-24T05:00:00', 9223372036854775807, '/etc', CAST(x'c328ff00' AS TEXT))",
			"INSERT INTO events (work_item_id, event_type, message, created_at, session_id, detail_json) VALUES (-1, "+h+", "+h+", 'yesterday', "+h+", '[1,2')",
		)
	}, dbExpect{status: model.StatusOK, reason: "undecodable", evidence: "expires_at unparseable", claims: 3}},
	"lease-worktree-dotdot": {func(t *testing.T, w *workspace) {
		host, _ := os.Hostname()
		leasestest.Insert(t, w.ws.DBPath, []leasestest.Session{{SessionID: "s1", Role: "author", Host: host}},
			[]leasestest.Lease{{LeaseID: "L1", SessionID: "s1", Role: "author", TaskClass: "author_issue_work", OwnerHost: host, OwnerPID: int64(os.Getpid()),
				Work: leasestest.Work(leaserec.KindIssue, 5), CreatedAt: "2026-07-24T05:50:00Z", ExpiresAt: "2026-07-24T07:00:00Z", WorktreePath: "../../etc"}})
	}, dbExpect{status: model.StatusOK, evidence: "not followed", claims: 1}},
}

// TestHostileDBCatalogue gives `steward status` each hostile control-plane DB state: the
// command never crashes or hangs, the DB source says what is wrong with it, and what
// could be read is still shown.
func TestHostileDBCatalogue(t *testing.T) {
	t.Parallel()
	for name, c := range dbCases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			w := newWorkspace(t)
			c.make(t, w)
			done := make(chan struct{})
			var s *model.Snapshot
			var raw string
			go func() {
				defer close(done)
				s, raw = w.status(t)
			}()
			select {
			case <-done:
			case <-time.After(60 * time.Second):
				t.Fatal("steward status hung on the DB")
			}
			if s == nil {
				return // status failed the test already
			}
			h := s.Sources.DB
			// What makes a read partial is its reason; what it lacks without that, a note
			// (an unknown schema version, an absent column steward or the seed's
			// later versions added, undecodable rows — each row's own verdicts are unproven).
			said := h.Reason + "|" + strings.Join(h.Notes, "|")
			if h.Status != c.want.status || !strings.Contains(said, c.want.reason) {
				t.Errorf("db source %s %q, want %s containing %q", h.Status, h.Reason, c.want.status, c.want.reason)
			}
			if len(s.Claims) < c.want.claims {
				t.Errorf("%d claims, want at least %d\n%s", len(s.Claims), c.want.claims, raw)
			}
			if c.want.evidence != "" {
				found := false
				for _, cl := range s.Claims {
					for _, e := range cl.Evidence {
						found = found || strings.Contains(e.Value, c.want.evidence)
					}
				}
				for _, o := range s.Orphans {
					for _, e := range o.Evidence {
						found = found || strings.Contains(e.Value, c.want.evidence)
					}
				}
				if !found {
					t.Errorf("no evidence contains %q\n%s", c.want.evidence, raw)
				}
			}
			if h.Status == model.StatusUnavailable {
				// Honesty: no DB means no lease orphans and no runnable item.
				for _, o := range s.Orphans {
					if o.LeaseID != "" {
						t.Errorf("lease orphan %s from an unavailable DB", o.Kind)
					}
				}
			}
		})
	}
}

// TestHostileDBNeverCreated: a status of a missing DB creates no file there.
func TestHostileDBNeverCreated(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	must(t, os.Remove(w.ws.DBPath))
	w.status(t)
	if _, err := os.Stat(w.ws.DBPath); !os.IsNotExist(err) {
		t.Fatalf("status created the DB file: %v", err)
	}
}

// openRO opens a DB read-only for invariant checks.
func openRO(path string) (*sql.DB, error) {
	return sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(10000)")
}
