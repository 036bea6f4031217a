// Package leasestest builds small control-plane DBs for other packages'
// tests: a migrated database in t.TempDir() holding the given sessions and
// leases, written as raw rows so fixtures can hold states the transitions
// would never produce (an unparseable expiry, an expired-but-active lease).
// It is for tests only.
package leasestest

import (
	"database/sql"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver

	"steward/leases"
	"steward/leases/leaserec"
)

// Session is a sessions row to insert.
type Session struct {
	SessionID       string
	Role            string
	Profile         string
	PID             int64
	Host            string
	Status          string // default "active"
	StartedAt       string // default Now
	LastHeartbeatAt string // default Now
}

// Lease is a leases row to insert; its work item is upserted from Work.
// Timestamps are raw text (use leaserec.FormatTime) so fixtures can hold
// missing or unparseable values; empty CreatedAt means Now, empty ExpiresAt
// stays NULL.
type Lease struct {
	LeaseID         string
	SessionID       string
	Role            string
	TaskClass       leaserec.TaskClass
	Phase           string // default "allocated"
	Status          leaserec.Status
	Work            leaserec.WorkRef
	CreatedAt       string
	ExpiresAt       string
	LastHeartbeatAt string
	OwnerPID        int64
	OwnerHost       string
	WorktreePath    string
}

// Now is the fixed instant fixtures default to.
var Now = time.Date(2026, 7, 23, 10, 0, 0, 0, time.UTC)

// Work returns a work reference on the fixture repository.
func Work(kind leaserec.WorkKind, n int64) leaserec.WorkRef {
	return leaserec.WorkRef{Remote: "prgs", Org: "acme", Repo: "widgets", Kind: kind, Number: n}
}

// NewDB creates a migrated DB in t.TempDir() holding sessions and ls, and
// returns its path.
func NewDB(t testing.TB, sessions []Session, ls []Lease) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "control_plane.sqlite3")
	if err := leases.Migrate(path); err != nil {
		t.Fatalf("leasestest: migrate: %v", err)
	}
	Insert(t, path, sessions, ls)
	return path
}

// Insert adds sessions and leases to an existing migrated DB: a SQLite file, or a
// PostgreSQL database steward initialised (path a postgres:// URL).
func Insert(t testing.TB, path string, sessions []Session, ls []Lease) {
	t.Helper()
	driver, dsn := "sqlite", path+"?_pragma=busy_timeout(5000)&_pragma=foreign_keys(1)"
	pg := leases.IsPostgresURL(path)
	if pg {
		driver, dsn = "pgx", path
	}
	raw, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatalf("leasestest: open: %v", err)
	}
	defer raw.Close()
	db := binder{raw, pg}
	now := leaserec.FormatTime(Now)
	for _, s := range sessions {
		if s.Status == "" {
			s.Status = "active"
		}
		if s.StartedAt == "" {
			s.StartedAt = now
		}
		if s.LastHeartbeatAt == "" {
			s.LastHeartbeatAt = now
		}
		if _, err := db.Exec(`INSERT INTO sessions(session_id, role, profile, pid, host, status,
			started_at, last_heartbeat_at) VALUES(?, ?, ?, ?, ?, ?, ?, ?)`, s.SessionID, s.Role,
			s.Profile, s.PID, s.Host, s.Status, s.StartedAt, s.LastHeartbeatAt); err != nil {
			t.Fatalf("leasestest: session %s: %v", s.SessionID, err)
		}
	}
	for _, l := range ls {
		var item int64
		w := l.Work
		conflict := "ON CONFLICT(remote, org, repo, work_kind, work_number) DO UPDATE SET state = state"
		if pg {
			conflict = "ON CONFLICT DO NOTHING" // steward's PostgreSQL key folds org and repo
		}
		err := db.QueryRow(`INSERT INTO work_items(remote, org, repo, work_kind, work_number)
			VALUES(?, ?, ?, ?, ?) `+conflict+` RETURNING work_item_id`,
			w.Remote, w.Org, w.Repo, string(w.Kind), w.Number).Scan(&item)
		if err == sql.ErrNoRows {
			err = db.QueryRow(`SELECT work_item_id FROM work_items WHERE remote = ? AND lower(org) = lower(?)
				AND lower(repo) = lower(?) AND work_kind = ? AND work_number = ?`,
				w.Remote, w.Org, w.Repo, string(w.Kind), w.Number).Scan(&item)
		}
		if err != nil {
			t.Fatalf("leasestest: work item %+v: %v", w, err)
		}
		if l.Status == "" {
			l.Status = leaserec.StatusActive
		}
		if l.Phase == "" {
			l.Phase = leaserec.PhaseAllocated
		}
		if l.CreatedAt == "" {
			l.CreatedAt = now
		}
		var exp, hb, pid any
		if l.ExpiresAt != "" {
			exp = l.ExpiresAt
		}
		if l.LastHeartbeatAt != "" {
			hb = l.LastHeartbeatAt
		}
		if l.OwnerPID != 0 {
			pid = l.OwnerPID
		}
		if _, err := db.Exec(`INSERT INTO leases(lease_id, work_item_id, session_id, role, task_class,
			phase, status, created_at, expires_at, last_heartbeat_at, owner_pid, owner_host, worktree_path)
			VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, l.LeaseID, item, l.SessionID, l.Role,
			string(l.TaskClass), l.Phase, string(l.Status), l.CreatedAt, exp, hb, pid, l.OwnerHost,
			l.WorktreePath); err != nil {
			t.Fatalf("leasestest: lease %s: %v", l.LeaseID, err)
		}
	}
}

// binder numbers ? placeholders on PostgreSQL.
type binder struct {
	db *sql.DB
	pg bool
}

func (b binder) bind(q string) string {
	if !b.pg {
		return q
	}
	var out strings.Builder
	n := 0
	for _, c := range q {
		if c == '?' {
			n++
			out.WriteString("$" + strconv.Itoa(n))
			continue
		}
		out.WriteRune(c)
	}
	return out.String()
}

func (b binder) Exec(q string, args ...any) (sql.Result, error) { return b.db.Exec(b.bind(q), args...) }
func (b binder) QueryRow(q string, args ...any) *sql.Row        { return b.db.QueryRow(b.bind(q), args...) }
