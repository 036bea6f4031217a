package live

import (
	"errors"
	"time"

	"steward/leases"
	"steward/model"
	"steward/watchdir"
)

// dbWatcher hints that the control-plane DB may have changed: the SQLite file's
// directory watch (leases.WatchDBWith) or PostgreSQL's notices (leases.ListenPG). A hint
// is confirmed by the reader's DataVersion and scoped by the events past the cursor.
type dbWatcher interface {
	Changes() <-chan watchdir.Change
	Mode() string
	Close() error
}

// watchDB starts the DB watcher with the Model's watch options: on PostgreSQL a
// connection that LISTENs for the transitions' notices, on SQLite the DB's directory.
func (l *Model) watchDB() (dbWatcher, error) {
	t := l.ws.DBTarget()
	if t.Postgres() {
		p, err := leases.ListenPG(t, leases.PGListenOptions{MaxBackoff: l.opt.ListenBackoff})
		if err != nil {
			return nil, err
		}
		return p, nil
	}
	w, err := leases.WatchDBWith(
		l.ws.DBPath,
		leases.DBWatchOptions{Quiet: l.opt.Quiet, Notify: l.opt.Notify, Poll: l.opt.Poll},
	)
	if err != nil {
		return nil, err
	}
	return w, nil
}

// dbNotices reports whether the DB watcher's hints are PostgreSQL's notices.
func (l *Model) dbNotices() bool {
	_, ok := l.dw.(*leases.PGListener)
	return ok
}

// locksWatchMode is "" while inotify watches the locks directory, else how it is watched.
func (l *Model) locksWatchMode() string {
	if l.lw == nil {
		return ""
	}
	return l.lw.Mode()
}

// dbWatchMode is "" while inotify watches the DB, else how it is watched (or that only
// the periodic resync re-reads it).
func (l *Model) dbWatchMode() string {
	if l.dw == nil {
		if l.started.Load() {
			return "DB not watched: re-read every " + l.opt.Resync.String()
		}
		return ""
	}
	m := l.dw.Mode()
	if m != "" && l.ws.DBTarget().Postgres() {
		m += "; re-read every " + l.opt.Resync.String() + " meanwhile"
	}
	return m
}

// noteWatchModes puts the watchers' modes into the sources' health as soon as they are
// known (Start reads the sources before the watchers exist).
func (l *Model) noteWatchModes() {
	if m := l.locksWatchMode(); m != "" {
		h := l.e.Sources().Locks
		if h.Status == model.StatusOK {
			l.e.SetHealth(model.SourceLocks, withNote(h, m))
			l.publish(l.now())
		}
	}
}

// withNote adds a watch note to a health's reason.
func withNote(h model.SourceHealth, note string) model.SourceHealth {
	switch {
	case note == "":
	case h.Reason == "":
		h.Reason = note
	default:
		h.Reason += "; " + note
	}
	return h
}

// dbBusy handles a read that found the DB held by another writer past the busy timeout.
// While another connection holds the write lock nothing else can commit, so the state
// read last is still the latest committed one: it is kept, and the DB reads degraded
// (partial: nothing is concluded from absence) with the reason, until a read works again.
// It reports false when err is not busy or there is no earlier read to keep.
func (l *Model) dbBusy(err error, now time.Time) bool {
	if !errors.Is(err, leases.ErrBusy) || l.dv == 0 {
		return false
	}
	l.busy = true
	h := l.e.Sources().DB
	h.Status, h.Partial = model.StatusDegraded, true
	h.Reason = "database busy (held by another writer past the busy timeout; " + err.Error() + "): showing the state " +
		"committed before, read at " +
		h.ScannedAt.UTC().
			Format(time.RFC3339) +
		" (checked " + now.UTC().
		Format(time.RFC3339) +
		")"
	l.e.SetHealth(model.SourceDB, h)
	return true
}
