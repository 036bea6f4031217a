package model

import (
	"context"
	"os"
	"strings"
	"syscall"
	"time"

	"steward/leases"
	"steward/locks"
)

func (l *Live) loop(ctx context.Context) {
	defer l.wg.Done()
	defer close(l.closed)
	resync := time.NewTicker(l.opt.Resync)
	defer resync.Stop()
	probe := time.NewTicker(l.opt.ProbeEvery)
	defer probe.Stop()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	armed := l.arm(timer)
	// A file event can precede the commit becoming visible (the writer
	// fsyncs the WAL before it publishes the commit in -shm, which is not
	// watched): when data_version has not moved yet, re-check with backoff.
	retry := time.NewTimer(time.Hour)
	retry.Stop()
	defer retry.Stop()
	var retryC <-chan time.Time
	backoff := time.Duration(0)
	recheck := func(moved bool) {
		if moved {
			backoff, retryC = 0, nil
			return
		}
		switch {
		case backoff == 0:
			backoff = 10 * time.Millisecond
		case backoff < 2*time.Second:
			backoff *= 2
		default:
			backoff, retryC = 0, nil // give up; the periodic resync heals
			return
		}
		retry.Reset(backoff)
		retryC = retry.C
	}
	lockCh := l.lw.Changes()
	var dbCh <-chan leases.DBChange
	if l.dw != nil {
		dbCh = l.dw.Changes()
	}
	for {
		var done chan struct{}
		select {
		case <-ctx.Done():
			return
		case c, ok := <-lockCh:
			if !ok {
				lockCh = nil // the watch ended; the periodic resync still heals
				continue
			}
			now := l.opt.Now()
			if c.Resync {
				l.resyncLocks(now, false)
			}
			for _, n := range c.Names {
				l.readLock(n, now)
			}
		case c, ok := <-dbCh:
			if !ok {
				dbCh = nil
				l.dw.Close()
				l.dw = nil
				continue
			}
			backoff = 0
			recheck(l.reloadDB(ctx, l.opt.Now(), c.Resync))
		case <-retryC:
			recheck(l.reloadDB(ctx, l.opt.Now(), false))
		case <-armed:
		case <-l.wake:
		case <-resync.C:
			now := l.opt.Now()
			l.resyncLocks(now, false)
			l.reloadDB(ctx, now, false)
			l.compact()
		case <-probe.C:
			l.reprobe()
		case r := <-l.giteaCh:
			l.e.setGitea(r.facts, l.e.clarifications(r.clars), r.health)
		case done = <-l.refresh:
			now := l.opt.Now()
			l.resyncLocks(now, false)
			l.reloadDB(ctx, now, true)
			l.reprobe()
		}
		now := l.opt.Now()
		n := l.e.tick(now)
		if n > 0 || done != nil {
			l.publish(now)
		}
		if done != nil {
			close(done)
		}
		armed = l.arm(timer)
		if dbCh == nil && l.dw != nil {
			dbCh = l.dw.Changes()
		}
	}
}

// arm sets the deadline timer to the next deadline; nil channel when none.
func (l *Live) arm(t *time.Timer) <-chan time.Time {
	next := l.e.next()
	if next.IsZero() {
		return nil
	}
	d := next.Sub(l.opt.Now())
	if d < 0 {
		d = 0
	}
	t.Reset(d + time.Millisecond)
	return t.C
}

// readLock re-reads one file of the locks directory.
func (l *Live) readLock(name string, now time.Time) {
	e := locks.ReadFile(l.ws.LocksDir, name)
	if e.Missing || e.Class != locks.ClassLive {
		l.e.setLock(name, nil)
		return
	}
	obs := l.probe.ObserveLock(e, now)
	l.e.setLock(name, &obs)
}

// resyncLocks re-lists the locks directory and re-reads only the files whose
// inode, size or mtime differ from what was read (all of them when full).
func (l *Live) resyncLocks(now time.Time, full bool) {
	t0 := time.Now()
	ents, err := os.ReadDir(l.ws.LocksDir)
	if err != nil {
		l.e.setHealth(&l.e.env.locks, SourceHealth{Status: StatusUnavailable, Reason: err.Error(), ScannedAt: now, ScanDuration: time.Since(t0)})
		return
	}
	seen := make(map[string]bool, len(ents))
	for _, de := range ents {
		name := de.Name()
		if strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".json") || de.IsDir() || strings.HasPrefix(name, "session-") {
			continue
		}
		seen[name] = true
		if old, ok := l.e.locks[name]; ok && !full && de.Type().IsRegular() {
			if fi, err := de.Info(); err == nil && sameFile(fi, old.Entry) {
				continue
			}
		}
		l.readLock(name, now)
	}
	for name := range l.e.locks {
		if !seen[name] {
			l.e.setLock(name, nil)
		}
	}
	l.e.setHealth(&l.e.env.locks, SourceHealth{Status: StatusOK, ScannedAt: now, ScanDuration: time.Since(t0)})
}

func sameFile(fi os.FileInfo, e locks.Entry) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && st.Ino == e.Inode && fi.Size() == e.Size && fi.ModTime().Equal(e.ModTime)
}

// reloadDB re-reads the DB when PRAGMA data_version moved (or force): the
// leases/sessions snapshot, diffed by id so only changed rows touch their
// items, and events incrementally past the cursor.
func (l *Live) reloadDB(ctx context.Context, now time.Time, force bool) (moved bool) {
	t0 := time.Now()
	if l.reader == nil {
		r, err := leases.OpenReadOnly(l.ws.DBPath)
		if err != nil {
			l.dbUnavailable(err, now, t0)
			return true
		}
		l.reader, force = r, true
		if l.dw == nil {
			if w, err := leases.WatchDB(l.ws.DBPath, 0); err == nil {
				l.dw = w // picked up by the loop on its next start; resync covers until then
			}
		}
	}
	dv, err := l.reader.DataVersion(ctx)
	if err != nil {
		l.reader.Close()
		l.reader = nil
		l.dbUnavailable(err, now, t0)
		return true
	}
	if dv == l.dv && !force {
		return false
	}
	s, err := l.reader.Snapshot(ctx, leases.ReadOptions{})
	if err != nil {
		l.dbUnavailable(err, now, t0)
		return true
	}
	l.dv = dv
	l.applyDB(ctx, s, now, t0)
	return true
}

func (l *Live) dbUnavailable(err error, now, t0 time.Time) {
	h := health(leases.HealthFromError(err), now, time.Since(t0))
	l.e.setSections(DBSections{})
	l.e.setHealth(&l.e.env.db, h)
}

func (l *Live) applyDB(ctx context.Context, s *leases.Snapshot, now, t0 time.Time) {
	e := l.e
	for _, w := range s.WorkItems {
		if it := itemOfRef(w.WorkRef); it != nil {
			e.workItems[w.WorkItemID] = *it
		}
	}
	seen := make(map[string]bool, len(s.Sessions))
	for _, x := range s.Sessions {
		seen[x.SessionID] = true
		old, ok := e.sessions[x.SessionID]
		if ok && sameSession(old.Session, x) {
			continue
		}
		so := l.probe.ObserveSession(x)
		e.setSession(x.SessionID, &so)
	}
	for id := range e.sessions {
		if !seen[id] {
			e.setSession(id, nil)
		}
	}
	seen = make(map[string]bool, len(s.Leases))
	for _, x := range s.Leases {
		seen[x.LeaseID] = true
		old, ok := e.leases[x.LeaseID]
		if ok && sameLease(old.Lease, x) {
			continue
		}
		lo := l.probe.ObserveLease(x)
		e.setLease(x.LeaseID, &lo)
	}
	for id := range e.leases {
		if !seen[id] {
			e.setLease(id, nil)
		}
	}
	l.lookupMissingRefs(ctx)
	evs, eh, cursor, err := readEvents(ctx, l.reader, l.cursor)
	if err != nil {
		eh = leases.HealthFromError(err)
	}
	l.cursor = cursor
	e.addEvents(evs)
	e.setSections(DBSections{Sessions: s.SessionsHealth.Status == leases.HealthOK, Leases: s.LeasesHealth.Status == leases.HealthOK,
		WorkItems: s.WorkItemsHealth.Status == leases.HealthOK, Events: eh.Status == leases.HealthOK})
	h := health(worstOf(s.SessionsHealth, s.LeasesHealth, s.WorkItemsHealth, eh), now, time.Since(t0))
	if h.Status == StatusUnavailable && s.LeasesHealth.Status != leases.HealthUnavailable {
		h.Status, h.Partial = StatusDegraded, true
	}
	e.setHealth(&e.env.db, h)
}

// lookupMissingRefs reads, by id, leases that locks name and the read set lacks.
func (l *Live) lookupMissingRefs(ctx context.Context) {
	for id, units := range l.e.refUnits {
		if _, ok := l.e.leases[id]; ok {
			continue
		}
		if _, ok := l.e.refs[id]; ok {
			continue
		}
		x, found, err := l.reader.LeaseByID(ctx, id)
		if err != nil {
			continue
		}
		if found {
			o := l.probe.ObserveLease(x)
			l.e.refs[id] = &o
		} else {
			l.e.refs[id] = nil
		}
		for k := range units {
			l.e.dirty[k] = true
		}
	}
}

func sameSession(a, b leases.Session) bool {
	return a.Status == b.Status && a.PID == b.PID && a.Host == b.Host && a.LastHeartbeatAt.Raw == b.LastHeartbeatAt.Raw &&
		a.EndedAt.Raw == b.EndedAt.Raw && a.Role == b.Role && a.Profile == b.Profile
}

func sameLease(a, b leases.Lease) bool {
	return a.Status == b.Status && a.SessionID == b.SessionID && a.ExpiresAt.Raw == b.ExpiresAt.Raw &&
		a.LastHeartbeatAt.Raw == b.LastHeartbeatAt.Raw && a.HeartbeatCount == b.HeartbeatCount && a.Phase == b.Phase &&
		a.ReleasedAt.Raw == b.ReleasedAt.Raw && a.AdoptedBySessionID == b.AdoptedBySessionID && a.ProvenanceRaw == b.ProvenanceRaw &&
		a.WorktreePath == b.WorktreePath && a.OwnerPID == b.OwnerPID && a.OwnerHost == b.OwnerHost && a.Work == b.Work &&
		a.Role == b.Role && a.TaskClass == b.TaskClass && a.CreatedAt.Raw == b.CreatedAt.Raw
}

// reprobe re-observes owner liveness and worktrees of local records; only the
// records whose observation changed touch their items.
func (l *Live) reprobe() {
	e := l.e
	for name, lo := range e.locks {
		if lo.Entry.Unreadable != nil || lo.PID <= 0 && lo.Worktree == WorktreeUnknown && !strings.HasPrefix(lo.WorkWhy, "stat") {
			continue
		}
		n := l.probe.ObserveLock(lo.Entry, lo.ReadAt)
		if n.Owner != lo.Owner || n.Worktree != lo.Worktree {
			e.setLock(name, &n)
		}
	}
	for id, lo := range e.leases {
		if lo.Lease.Status.Terminal() || lo.Lease.OwnerHost != l.probe.Host {
			continue
		}
		n := l.probe.ObserveLease(lo.Lease)
		if n.Owner != lo.Owner || n.Worktree != lo.Worktree {
			e.setLease(id, &n)
		}
	}
	for id, so := range e.sessions {
		if so.Session.Host != l.probe.Host {
			continue
		}
		n := l.probe.ObserveSession(so.Session)
		if n.Owner != so.Owner {
			e.setSession(id, &n)
		}
	}
}

// compact drops stale heap entries when the heap grew well past the units.
func (l *Live) compact() {
	e := l.e
	if len(e.dl) <= 2*len(e.units)+len(e.sessions)+64 {
		return
	}
	var keep deadlines
	for _, d := range e.dl {
		if len(d.key) > 2 && d.key[:2] == "s\x00" {
			keep = append(keep, d)
		} else if u := e.units[d.key]; u != nil && u.next.Equal(d.at) {
			keep = append(keep, d)
		}
	}
	e.dl = keep
	heapInit(&e.dl)
}
