package model

import (
	"errors"
	"strings"
	"time"

	"steward/leases"
)

// watchDB starts the DB watcher with the Live's watch options.
func (l *Live) watchDB() (*leases.DBWatcher, error) {
	return leases.WatchDBWith(l.ws.DBPath, leases.DBWatchOptions{Notify: l.opt.Notify, Poll: l.opt.Poll})
}

// locksWatchMode is "" while inotify watches the locks directory, else how it is watched.
func (l *Live) locksWatchMode() string {
	if l.lw == nil {
		return ""
	}
	return l.lw.Mode()
}

// dbWatchMode is "" while inotify watches the DB, else how it is watched (or that only
// the periodic resync re-reads it).
func (l *Live) dbWatchMode() string {
	if l.dw == nil {
		if l.started.Load() {
			return "DB not watched: re-read every " + l.opt.Resync.String()
		}
		return ""
	}
	return l.dw.Mode()
}

// noteWatchModes puts the watchers' modes into the sources' health as soon as they are
// known (Start reads the sources before the watchers exist).
func (l *Live) noteWatchModes() {
	if m := l.locksWatchMode(); m != "" {
		h := l.e.env.locks
		if h.Status == StatusOK {
			l.e.setHealth(&l.e.env.locks, withNote(h, m))
			l.publish(l.opt.Now())
		}
	}
}

// withNote adds a watch note to a health's reason.
func withNote(h SourceHealth, note string) SourceHealth {
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
func (l *Live) dbBusy(err error, now time.Time) bool {
	if !errors.Is(err, leases.ErrBusy) || l.dv == 0 {
		return false
	}
	l.busy = true
	h := l.e.env.db
	h.Status, h.Partial = StatusDegraded, true
	h.Reason = "database busy (held by another writer past the busy timeout; " + err.Error() + "): showing the state committed before, read at " +
		h.ScannedAt.UTC().Format(time.RFC3339) + " (checked " + now.UTC().Format(time.RFC3339) + ")"
	l.e.setHealth(&l.e.env.db, h)
	return true
}

// sourcesSig is what the screen shows of the sources' health (status, partial, reason),
// to tell whether it changed.
func (e *engine) sourcesSig() string {
	var b strings.Builder
	for _, h := range [...]SourceHealth{e.env.locks, e.env.db, e.env.gitea} {
		b.WriteString(string(h.Status))
		if h.Partial {
			b.WriteString("+")
		}
		b.WriteString(h.Reason)
		for _, n := range h.Notes {
			b.WriteByte(1)
			b.WriteString(n)
		}
		b.WriteByte(0)
	}
	return b.String()
}
