package phase

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"steward/bench/internal/fleet"
	"steward/leases/leaserec"
	"steward/locks"
	"steward/locks/lockrec"
)

// The changes both sides time are the ones a worker's heartbeat makes on the claim the
// workbench has selected: its lock file rewritten (temp file, then rename) with a new expiry,
// and its lease row moved on in one transaction with a new expiry, the session's heartbeat
// and an event. Each round's expiry differs by a second, so each one is visible.

// lockBeat is a prepared lock-file heartbeat: the temp file is written, the rename is not.
type lockBeat struct {
	tmp, path string
	expires   string // the new work_lease.expires_at, as written
}

// prepareLockBeat writes the temp file of heartbeat round i of claim n.
func prepareLockBeat(m *fleet.Meta, n int64, i int, now time.Time) (lockBeat, error) {
	name := fleet.LockName(n)
	e := locks.ReadFile(m.LocksDir, name)
	if e.Missing || e.Unreadable != nil {
		return lockBeat{}, fmt.Errorf("lock %s unreadable", name)
	}
	rec := e.Record
	if rec.WorkLease == nil {
		return lockBeat{}, fmt.Errorf("lock %s has no work_lease", name)
	}
	wl := *rec.WorkLease
	exp := m.Base.Add(fleet.TTL + time.Duration(i+1)*time.Second)
	wl.ExpiresAt, wl.LastHeartbeatAt = lockrec.NewTimestamp(exp), lockrec.NewTimestamp(now)
	c := int64(1)
	if wl.HeartbeatCount != nil {
		c = *wl.HeartbeatCount + 1
	}
	wl.HeartbeatCount = &c
	rec.WorkLease, rec.Raw = &wl, nil
	data, err := lockrec.Marshal(&rec)
	if err != nil {
		return lockBeat{}, err
	}
	b := lockBeat{
		tmp:     filepath.Join(m.LocksDir, ".bench-"+name+".tmp"),
		path:    filepath.Join(m.LocksDir, name),
		expires: wl.ExpiresAt.Text,
	}
	return b, os.WriteFile(b.tmp, data, 0o600)
}

// commit renames the temp file into place: the timed event.
func (b lockBeat) commit() error { return os.Rename(b.tmp, b.path) }

// dbBeat is a prepared lease heartbeat: the transaction is open, the commit is not.
type dbBeat struct {
	tx      *sql.Tx
	expires time.Time
}

// prepareDBBeat opens the transaction of heartbeat round i of lease id (session sid).
func prepareDBBeat(db *sql.DB, m *fleet.Meta, id, sid string, i int, now time.Time) (dbBeat, error) {
	exp := m.Base.Add(fleet.TTL + 5*time.Minute + time.Duration(i+1)*time.Second)
	tx, err := db.Begin()
	if err != nil {
		return dbBeat{}, err
	}
	ts := leaserec.FormatTime(now)
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`UPDATE leases SET expires_at = ?, last_heartbeat_at = ?, heartbeat_count = heartbeat_count + 1 WHERE lease_id = ?`,
			[]any{leaserec.FormatTime(exp), ts, id}},
		{`UPDATE sessions SET last_heartbeat_at = ? WHERE session_id = ?`, []any{ts, sid}},
		{`INSERT INTO events(work_item_id, event_type, message, created_at, session_id, detail_json)
			SELECT work_item_id, 'lease.heartbeat', 'heartbeat', ?, session_id, '{}'
			FROM leases WHERE lease_id = ?`, []any{ts, id}},
	} {
		if _, err := tx.Exec(q.sql, q.args...); err != nil {
			tx.Rollback()
			return dbBeat{}, err
		}
	}
	return dbBeat{tx: tx, expires: exp.UTC().Truncate(time.Second)}, nil
}
