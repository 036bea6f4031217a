// Package seedtest builds control-plane DBs the way the supervised system itself
// writes them, for tests: the seed's table and column names only (none of
// steward's additions: no sessions.host, leases.task_class, owner_host or
// end_reason, no events.session_id or detail_json), no CHECK constraint and no
// partial index steward's own schema has, SQLite's default rollback-journal mode
// (the seed opens the file with sqlite3.connect(path, timeout=30)), and rows
// written as the seed writes them: raw text timestamps (naive
// "YYYY-MM-DD HH:MM:SS" or isoformat() with +00:00), statuses in whatever case
// the row holds, owner_pid without a host.
//
// Where the seed shows a table but not all of its columns, the columns are the
// ones docs/formats.md marks "inferred"; Options.Drop takes any of them away and
// Options.Add puts others in (the seed's proposed lease_generation_id, or one of
// steward's enrichments, to test both sides).
//
// It also fingerprints a workspace's files (Fingerprint) so tests can prove that
// a read, a preview or a refusal left every byte of the DB, its journal/WAL and
// the lock directory unchanged. It is for tests only and writes only the files it
// creates.
package seedtest

import (
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// Table is one seed-shaped table: its name and columns with their SQL types, in order.
type Table struct {
	Name    string
	Columns [][2]string
}

// Tables is the seed-shaped schema: every table and column steward reads, by the
// seed's names, and nothing steward added.
var Tables = []Table{
	{"schema_meta", [][2]string{{"key", "TEXT PRIMARY KEY"}, {"value", "TEXT"}}},
	{"sessions", [][2]string{{"session_id", "TEXT PRIMARY KEY"}, {"role", "TEXT"}, {"profile", "TEXT"},
		{"pid", "INTEGER"}, {"controller_instance_id", "TEXT"}, {"status", "TEXT"}, {"started_at", "TEXT"},
		{"last_heartbeat_at", "TEXT"}, {"ended_at", "TEXT"}}},
	{"work_items", [][2]string{{"work_item_id", "INTEGER PRIMARY KEY AUTOINCREMENT"}, {"remote", "TEXT"},
		{"org", "TEXT"}, {"repo", "TEXT"}, {"work_kind", "TEXT"}, {"work_number", "INTEGER"}, {"title", "TEXT"},
		{"state", "TEXT"}}},
	{"leases", [][2]string{{"lease_id", "TEXT PRIMARY KEY"}, {"work_item_id", "INTEGER"}, {"session_id", "TEXT"},
		{"role", "TEXT"}, {"phase", "TEXT"}, {"status", "TEXT"}, {"created_at", "TEXT"}, {"expires_at", "TEXT"},
		{"last_heartbeat_at", "TEXT"}, {"heartbeat_count", "INTEGER"}, {"released_at", "TEXT"},
		{"expected_head_sha", "TEXT"}, {"allowed_actions", "TEXT"}, {"forbidden_actions", "TEXT"},
		{"provenance_json", "TEXT"}, {"owner_pid", "INTEGER"}, {"worktree_path", "TEXT"},
		{"adopted_by_session_id", "TEXT"}, {"adopted_from_session_id", "TEXT"}}},
	{"assignments", [][2]string{{"assignment_id", "TEXT PRIMARY KEY"}, {"lease_id", "TEXT"}, {"session_id", "TEXT"},
		{"work_item_id", "INTEGER"}, {"role", "TEXT"}, {"created_at", "TEXT"}, {"status", "TEXT"}}},
	{"events", [][2]string{{"event_id", "INTEGER PRIMARY KEY AUTOINCREMENT"}, {"work_item_id", "INTEGER"},
		{"event_type", "TEXT"}, {"message", "TEXT"}, {"created_at", "TEXT"}}},
}

// Options shape the schema.
type Options struct {
	// Drop names columns ("leases.expires_at") or whole tables ("events") left out.
	Drop []string
	// Add puts extra columns in: "leases.lease_generation_id INTEGER".
	Add []string
	// SchemaVersion is schema_meta.schema_version (default "4", the seed's sample).
	SchemaVersion string
}

// DB is a seed-shaped control-plane DB in a test's temp directory.
type DB struct {
	// Path is the DB file.
	Path string
	t    testing.TB
	cols map[string]map[string]bool
}

// Now is the fixed instant fixtures are written around (the same as leasestest.Now).
var Now = time.Date(2026, 7, 23, 10, 0, 0, 0, time.UTC)

// Naive renders t as the seed's naive "YYYY-MM-DD HH:MM:SS" (UTC, no zone).
func Naive(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05") }

// ISO renders t as Python's datetime.isoformat() of an aware UTC time: +00:00, and a
// microsecond fraction only when it is not zero.
func ISO(t time.Time) string {
	t = t.UTC()
	if t.Nanosecond()/1000 == 0 {
		return t.Format("2006-01-02T15:04:05+00:00")
	}
	return t.Format("2006-01-02T15:04:05.000000+00:00")
}

// New creates a seed-shaped DB in t.TempDir() (rollback journal) and returns it.
func New(t testing.TB, opt Options) *DB {
	t.Helper()
	return NewAt(t, filepath.Join(t.TempDir(), "control_plane.sqlite3"), opt)
}

// NewAt creates a seed-shaped DB at path (which must not exist).
func NewAt(t testing.TB, path string, opt Options) *DB {
	t.Helper()
	if _, err := os.Stat(path); err == nil {
		t.Fatalf("seedtest: %s exists", path)
	}
	d := &DB{Path: path, t: t, cols: map[string]map[string]bool{}}
	drop := map[string]bool{}
	for _, x := range opt.Drop {
		drop[x] = true
	}
	add := map[string][]string{}
	for _, x := range opt.Add {
		tc, typ, _ := strings.Cut(x, " ")
		table, col, _ := strings.Cut(tc, ".")
		add[table] = append(add[table], col+" "+typ)
	}
	var stmts []string
	for _, tb := range Tables {
		if drop[tb.Name] {
			continue
		}
		var defs []string
		d.cols[tb.Name] = map[string]bool{}
		for _, c := range tb.Columns {
			if drop[tb.Name+"."+c[0]] {
				continue
			}
			defs = append(defs, c[0]+" "+c[1])
			d.cols[tb.Name][c[0]] = true
		}
		for _, a := range add[tb.Name] {
			defs = append(defs, a)
			name, _, _ := strings.Cut(a, " ")
			d.cols[tb.Name][name] = true
		}
		stmts = append(stmts, "CREATE TABLE "+tb.Name+" ("+strings.Join(defs, ", ")+")")
	}
	ver := opt.SchemaVersion
	if ver == "" {
		ver = "4"
	}
	if !drop["schema_meta"] {
		stmts = append(
			stmts,
			"INSERT INTO schema_meta(key, value) VALUES('schema_version', '"+ver+"')",
			"INSERT INTO schema_meta(key, value) VALUES('architecture', 'DB coordinates exclusive ownership; lock files and "+
				"Gitea bridge it')",
		)
	}
	d.Exec(stmts...)
	return d
}

// open opens a raw writer as the supervised system does: default journal mode, no pragma
// that persists in the file.
func (d *DB) open() *sql.DB {
	d.t.Helper()
	db, err := sql.Open("sqlite", "file:"+d.Path+"?_pragma=busy_timeout(30000)")
	if err != nil {
		d.t.Fatalf("seedtest: open: %v", err)
	}
	db.SetMaxOpenConns(1)
	return db
}

// Exec runs statements on the DB as a foreign writer (the supervised system).
func (d *DB) Exec(stmts ...string) {
	d.t.Helper()
	db := d.open()
	defer db.Close()
	for _, q := range stmts {
		if _, err := db.Exec(q); err != nil {
			d.t.Fatalf("seedtest: %s: %v", q, err)
		}
	}
}

// Has reports whether the DB has table.col.
func (d *DB) Has(table, col string) bool { return d.cols[table][col] }

// insert writes one row of the values whose columns the table has.
func (d *DB) insert(table string, vals map[string]any) int64 {
	d.t.Helper()
	var cols, marks []string
	var args []any
	keys := make([]string, 0, len(vals))
	for k := range vals {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !d.Has(table, k) {
			continue
		}
		cols, marks, args = append(cols, k), append(marks, "?"), append(args, vals[k])
	}
	db := d.open()
	defer db.Close()
	res, err := db.Exec(
		"INSERT INTO "+table+"("+strings.Join(cols, ", ")+") VALUES("+strings.Join(marks, ", ")+")",
		args...)
	if err != nil {
		d.t.Fatalf("seedtest: insert %s %v: %v", table, vals, err)
	}
	id, _ := res.LastInsertId()
	return id
}

// null turns "" into NULL.
func null(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// Session is a sessions row as the seed writes it (upsert_session: pid = os.getpid()).
type Session struct {
	SessionID, Role, Profile, Status string
	PID                              int64
	ControllerInstanceID             string
	StartedAt, LastHeartbeatAt       string // raw text; "" is NULL
	EndedAt                          string
}

// AddSession inserts s; an empty Status is "active".
func (d *DB) AddSession(s Session) {
	d.t.Helper()
	if s.Status == "" {
		s.Status = "active"
	}
	var pid any
	if s.PID != 0 {
		pid = s.PID
	}
	d.insert("sessions", map[string]any{"session_id": s.SessionID, "role": s.Role, "profile": s.Profile,
		"pid": pid, "controller_instance_id": s.ControllerInstanceID, "status": s.Status,
		"started_at": null(s.StartedAt), "last_heartbeat_at": null(s.LastHeartbeatAt), "ended_at": null(s.EndedAt)})
}

// Item names a work item.
type Item struct {
	Remote, Org, Repo string
	Kind              string // "issue", "pr", or as the row writes it ("Issue")
	Number            int64
}

// Issue is an issue of the fixture repository.
func Issue(n int64) Item {
	return Item{Remote: "prgs", Org: "acme", Repo: "widgets", Kind: "issue", Number: n}
}

// PR is a pull request of the fixture repository.
func PR(n int64) Item {
	return Item{Remote: "prgs", Org: "acme", Repo: "widgets", Kind: "pr", Number: n}
}

// WorkItem returns the id of it, inserting the row when no row has exactly its key.
func (d *DB) WorkItem(it Item) int64 {
	d.t.Helper()
	db := d.open()
	var id int64
	err := db.QueryRow(`SELECT work_item_id FROM work_items WHERE remote = ? AND org = ? AND repo = ? AND work_kind = ?
		AND work_number = ?`, it.Remote, it.Org, it.Repo, it.Kind, it.Number).Scan(&id)
	db.Close()
	if err == nil {
		return id
	}
	if !errors.Is(err, sql.ErrNoRows) {
		d.t.Fatalf("seedtest: work item: %v", err)
	}
	return d.insert("work_items", map[string]any{"remote": it.Remote, "org": it.Org, "repo": it.Repo,
		"work_kind": it.Kind, "work_number": it.Number, "title": "item " + it.Kind, "state": "open"})
}

// Lease is a leases row as the seed writes it. Timestamps are raw text ("" is NULL);
// OwnerPID 0 is NULL; Generation is written only where the DB has lease_generation_id.
type Lease struct {
	LeaseID, SessionID, Role, Phase, Status string
	Item                                    Item
	CreatedAt, ExpiresAt, LastHeartbeatAt   string
	HeartbeatCount                          int64
	ReleasedAt                              string
	OwnerPID                                int64
	WorktreePath                            string
	ProvenanceJSON                          string
	AdoptedBySessionID                      string
	Generation                              int64
}

// AddLease inserts l (and its work item); an empty Status is "active", Phase "allocated".
func (d *DB) AddLease(l Lease) {
	d.t.Helper()
	if l.Status == "" {
		l.Status = "active"
	}
	if l.Phase == "" {
		l.Phase = "allocated"
	}
	item := d.WorkItem(l.Item)
	var pid, gen any
	if l.OwnerPID != 0 {
		pid = l.OwnerPID
	}
	if l.Generation != 0 {
		gen = l.Generation
	}
	d.insert("leases", map[string]any{"lease_id": l.LeaseID, "work_item_id": item, "session_id": l.SessionID,
		"role": l.Role, "phase": l.Phase, "status": l.Status, "created_at": null(l.CreatedAt),
		"expires_at": null(l.ExpiresAt), "last_heartbeat_at": null(l.LastHeartbeatAt), "heartbeat_count": l.HeartbeatCount,
		"released_at": null(l.ReleasedAt), "expected_head_sha": "", "allowed_actions": "[]", "forbidden_actions": "[]",
		"provenance_json": l.ProvenanceJSON, "owner_pid": pid, "worktree_path": l.WorktreePath,
		"adopted_by_session_id": null(l.AdoptedBySessionID), "lease_generation_id": gen})
	if d.Has("assignments", "assignment_id") {
		d.insert("assignments", map[string]any{"assignment_id": "asg-" + l.LeaseID, "lease_id": l.LeaseID,
			"session_id": l.SessionID, "work_item_id": item, "role": l.Role, "created_at": null(l.CreatedAt),
			"status": l.Status})
	}
}

// Event is an events row: the seed's five columns, no session.
type Event struct {
	Item      *Item // nil: no work item
	Type      string
	Message   string
	CreatedAt string
}

// AddEvent inserts e and returns its event_id.
func (d *DB) AddEvent(e Event) int64 {
	d.t.Helper()
	var item any
	if e.Item != nil {
		item = d.WorkItem(*e.Item)
	}
	return d.insert("events", map[string]any{"work_item_id": item, "event_type": e.Type, "message": e.Message,
		"created_at": null(e.CreatedAt)})
}

// JournalMode reads the DB's journal mode without changing it ("delete" for the seed's).
func JournalMode(t testing.TB, path string) string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var m string
	if err := db.QueryRow("PRAGMA journal_mode").Scan(&m); err != nil {
		t.Fatal(err)
	}
	return strings.ToLower(m)
}

// HeaderVersions returns bytes 18 and 19 of the DB file: the file-format write and read
// versions, 1/1 for a rollback journal and 2/2 for WAL. A handle that switches the file to
// WAL changes them.
func HeaderVersions(t testing.TB, path string) [2]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil || len(b) < 20 {
		t.Fatalf("seedtest: header of %s: %v", path, err)
	}
	return [2]byte{b[18], b[19]}
}

// Fingerprint hashes every file that makes up the state of a workspace: the DB file
// with its -journal, -wal and -shm companions (present or absent), and every entry under
// each directory in dirs (names, kinds and contents, recursively). Two equal
// fingerprints mean not one byte, file or name changed.
func Fingerprint(t testing.TB, db string, dirs ...string) string {
	t.Helper()
	h := sha256.New()
	for _, p := range []string{db, db + "-journal", db + "-wal", db + "-shm"} {
		h.Write([]byte(p + "\x00"))
		b, err := os.ReadFile(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			h.Write([]byte("absent\x00"))
		case err != nil:
			t.Fatalf("seedtest: %v", err)
		default:
			h.Write(b)
			h.Write([]byte{0})
		}
	}
	for _, dir := range dirs {
		var names []string
		err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			names = append(names, p)
			return nil
		})
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("seedtest: %v", err)
		}
		slices.Sort(names)
		for _, p := range names {
			fi, err := os.Lstat(p)
			if err != nil {
				t.Fatal(err)
			}
			h.Write([]byte(p + "\x00" + fi.Mode().String() + "\x00"))
			if fi.Mode().IsRegular() {
				b, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				h.Write(b)
			}
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}
