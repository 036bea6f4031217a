package live

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"steward/leases"
	"steward/locks"
	"steward/locks/lockrec"
	"steward/model"
	"steward/watchdir"
)

func (l *Model) loop(ctx context.Context) {
	defer l.wg.Done()
	defer close(l.closed)
	resync := time.NewTicker(l.opt.Resync)
	defer resync.Stop()
	probe := time.NewTicker(l.opt.ProbeEvery)
	defer probe.Stop()
	access := time.NewTicker(l.opt.AccessEvery)
	defer access.Stop()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	armed := l.arm(timer)
	// A file event can precede the commit becoming visible (the writer
	// fsyncs the WAL before it publishes the commit in -shm, which is not
	// watched): when data_version has not moved yet, re-check with backoff.
	// A read that did move may still have missed a commit: one gathering
	// window can hold the writes of two commits, the read landing between the
	// first's publication and the second's, whose writes raised no event after
	// it. So a moved read is confirmed too, a few times over a short span
	// (confirmFor); a check that moves starts it again.
	retry := time.NewTimer(time.Hour)
	retry.Stop()
	defer retry.Stop()
	var retryC <-chan time.Time
	backoff, limit := time.Duration(0), time.Duration(0)
	const confirmFor, giveUp = 160 * time.Millisecond, 2 * time.Second
	recheck := func(moved bool) {
		switch {
		case moved:
			backoff, limit = 10*time.Millisecond, confirmFor
		case backoff == 0:
			backoff, limit = 10*time.Millisecond, giveUp
		case backoff < limit:
			backoff *= 2
		default:
			backoff, retryC = 0, nil // give up; the periodic resync heals
			return
		}
		retry.Reset(backoff)
		retryC = retry.C
	}
	var lockCh <-chan watchdir.Change
	if l.lw != nil { // nil: the lock directory is on another host and not watched
		lockCh = l.lw.Changes()
	}
	var dbCh <-chan watchdir.Change
	if l.dw != nil {
		dbCh = l.dw.Changes()
	}
	var branchCh <-chan watchdir.Change
	if l.bw != nil {
		branchCh = l.bw.Changes()
	}
	for {
		var done chan struct{}
		health := l.e.SourcesSig()
		select {
		case <-ctx.Done():
			return
		case c, ok := <-lockCh:
			if !ok {
				lockCh = nil // the watch ended; the periodic resync still heals
				continue
			}
			now := l.now()
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
			if l.dbNotices() && !c.Resync {
				// A notice follows its commit: nothing to re-check later.
				l.reloadNotice(ctx, l.now())
				break
			}
			recheck(l.reloadDB(ctx, l.now(), c.Resync))
		case <-retryC:
			recheck(l.reloadDB(ctx, l.now(), false))
		case <-armed:
		case <-l.wake:
		case <-resync.C:
			now := l.now()
			if !l.listBeside() {
				l.resyncLocks(now, false)
			}
			// In full when a scoped read was applied since the last full
			// one: a commit without an event in the same batch as one with
			// events was not seen by the scoped read. That read runs beside
			// the loop (readBeside), so that a change landing meanwhile is
			// not held behind it.
			if !l.last.scoped || !l.readBeside(ctx) {
				l.reloadDB(ctx, now, l.last.scoped)
			}
		case b := <-l.bgC:
			l.applyBeside(ctx, b, l.now())
		case r := <-l.lsC:
			l.applyListing(r, l.now())
		case <-probe.C:
			l.reprobe(false)
		case c, ok := <-branchCh:
			if !ok {
				branchCh = nil // the watch ended: the periodic pass still looks at every worktree
				continue
			}
			l.reprobeWorktrees(c)
		case <-access.C:
			l.checkAccess(ctx)
		case r := <-l.giteaCh:
			l.e.SetGitea(r.facts, r.clars, r.health)
		case ch := <-l.stats:
			ch <- l.e.Stats()
			continue
		case done = <-l.refresh:
			now := l.now()
			l.resyncLocks(now, false)
			l.reloadDB(ctx, now, true)
			l.reprobe(true)
		}
		now := l.now()
		n := l.e.Tick(now)
		// A source's health can change with no item to re-derive (an empty workspace, a
		// reason that changed under the same status): it is published all the same.
		if n > 0 || done != nil || l.e.SourcesSig() != health || l.e.ActivityNew() {
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

// checkAccess opens the lock directory and a SQLite DB file to see whether they still can
// be: a permission taken away (chmod 000) raises no event that names a lock or the DB, and
// the reader held open goes on reading a file no new reader — a worker, `steward status`
// — can open. When a source's openability changed since the last check it is read again
// now: the listing (or the reopened DB) then fails with the reason and the source reads
// unavailable within one AccessEvery, not at the next resync; once it can be opened again
// it is read again and recovers.
func (l *Model) checkAccess(ctx context.Context) {
	now := l.now()
	if _, observe := model.LocksHere(l.ws.Host, l.probe.Host, now); observe {
		if denied := locks.Accessible(l.ws.LocksDir) != nil; denied != l.denied.locks {
			l.denied.locks = denied
			l.resyncLocks(now, false)
		}
	}
	if denied := leases.Accessible(l.ws.DBTarget()) != nil; denied != l.denied.db {
		l.denied.db = denied
		if denied && l.reader != nil {
			l.reader.Close()
			l.reader, l.busy = nil, false
		}
		l.reloadDB(ctx, now, true)
	}
}

// arm sets the deadline timer to the next deadline; nil channel when none.
func (l *Model) arm(t *time.Timer) <-chan time.Time {
	next := l.e.Next()
	if next.IsZero() {
		return nil
	}
	d := next.Sub(l.now())
	if d < 0 {
		d = 0
	}
	t.Reset(d + time.Millisecond)
	return t.C
}

// readLock re-reads one file of the locks directory.
func (l *Model) readLock(name string, now time.Time) {
	if l.lsC != nil {
		l.lsRead[name] = true // newer than the listing in flight
	}
	l.setRead(name, locks.ReadFile(l.ws.LocksDir, name), now)
}

// listBeside starts the periodic listing of the locks directory beside the loop — the
// names and an lstat of each, what tells which files changed — and reports whether it
// did (or one is in flight already). The loop then reads only the files that changed.
func (l *Model) listBeside() bool {
	if l.lsC != nil {
		return true
	}
	if _, observe := model.LocksHere(l.ws.Host, l.probe.Host, l.now()); !observe {
		return false
	}
	ch := make(chan lockRead, 1)
	l.lsC, l.lsRead, l.lsStale = ch, map[string]bool{}, false
	dir, hook := l.ws.LocksDir, l.lsHook
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		r := lockRead{t0: time.Now()}
		if r.ents, r.err = locks.List(dir); r.err == nil {
			forEach(len(r.ents), func(i int) { r.ents[i].Stat() })
		}
		if hook != nil {
			hook()
		}
		ch <- r
	}()
	return true
}

// applyListing applies a listing taken beside the loop: the files whose lstat differs
// from what is held are read (on every core), the files no longer listed dropped — except
// those read by events since the listing began, which are newer than it. A listing that a
// full one applied here meanwhile made older is dropped.
func (l *Model) applyListing(r lockRead, now time.Time) {
	keep := l.lsRead
	l.lsC, l.lsRead = nil, nil
	if l.lsStale {
		return
	}
	if r.err == nil {
		for _, le := range r.ents {
			if old, ok := l.e.Lock(le.Name); ok && le.Unchanged(old.Entry) || keep[le.Name] {
				continue
			}
			r.changed = append(r.changed, le)
		}
		r.read = locks.ReadListed(l.ws.LocksDir, r.changed)
		r.observe(l.probe, now)
	}
	l.applyLocks(r, now, false, keep)
}

// setLock records what a read of lock file name found (nil: no live lock of that name) in
// the engine and in the tracked view of the directory.
func (l *Model) setLock(name string, o *model.LockObs) {
	l.e.SetLock(name, o)
	if o == nil {
		l.view.Set(name, nil)
	} else {
		l.view.Set(name, &o.Entry)
	}
}

// setRead records what a read of lock file name found. The record is kept without the
// file's bytes (lockrec.Record.Detach): the detail pane reads the file again.
func (l *Model) setRead(name string, e lockrec.Entry, now time.Time) {
	if e.Missing || e.Class != lockrec.ClassLive {
		l.setLock(name, nil)
		return
	}
	e.Record.Detach()
	obs := l.probe.ObserveLock(e, now)
	l.setLock(name, &obs)
}

// resyncLocks re-lists the locks directory and re-reads only the files whose
// inode, size or mtime differ from what was read (all of them when full).
func (l *Model) resyncLocks(now time.Time, full bool) {
	if h, observe := model.LocksHere(l.ws.Host, l.probe.Host, now); !observe {
		l.e.SetHealth(model.SourceLocks, h)
		return
	}
	t0 := time.Now()
	ents, err := locks.List(l.ws.LocksDir)
	if err != nil {
		l.e.SetHealth(
			model.SourceLocks,
			model.SourceHealth{
				Status:       model.StatusUnavailable,
				Reason:       err.Error(),
				ScannedAt:    now,
				ScanDuration: time.Since(t0),
			},
		)
		return
	}
	var changed []locks.Listed
	for _, le := range ents {
		if old, ok := l.e.Lock(le.Name); ok && !full && le.Unchanged(old.Entry) {
			continue
		}
		changed = append(changed, le)
	}
	// Read, decode and probe on every core; recorded in listing order, here.
	r := lockRead{ents: ents, changed: changed, read: locks.ReadListed(l.ws.LocksDir, changed), t0: t0}
	r.observe(l.probe, now)
	l.applyLocks(r, now, full, nil)
	l.lsStale = l.lsC != nil // a listing begun beside the loop before this one is older
}

// lockRead is one listing of the locks directory and the files of it that were read.
type lockRead struct {
	ents    []locks.Listed
	changed []locks.Listed
	read    []lockrec.Entry  // of changed, in its order
	obs     []*model.LockObs // of read: nil for a file that is not a live lock
	err     error            // the listing failed
	t0      time.Time
}

// observe probes the owners and worktrees of the live locks read, on every core, each
// record kept without the file's bytes (lockrec.Record.Detach: the detail pane reads the
// file again).
func (r *lockRead) observe(p Probe, now time.Time) {
	r.obs = make([]*model.LockObs, len(r.read))
	forEach(len(r.read), func(i int) {
		e := r.read[i]
		if e.Missing || e.Class != lockrec.ClassLive {
			return
		}
		e.Record.Detach()
		o := p.ObserveLock(e, now)
		r.obs[i] = &o
	})
}

// readAllLocks lists the locks directory and reads every file in it, touching nothing
// of the engine: Start runs it beside the first read of the DB.
func readAllLocks(dir string, p Probe, now time.Time) lockRead {
	r := lockRead{t0: time.Now()}
	if r.ents, r.err = locks.List(dir); r.err == nil {
		r.changed = r.ents
		r.read = locks.ReadListed(dir, r.ents)
		r.observe(p, now)
	}
	return r
}

// applyLocks records a listing and its reads: the files read are set, the files no longer
// listed dropped, the source's health set.
func (l *Model) applyLocks(r lockRead, now time.Time, full bool, keep map[string]bool) {
	if r.err != nil {
		l.e.SetHealth(
			model.SourceLocks,
			model.SourceHealth{
				Status:       model.StatusUnavailable,
				Reason:       r.err.Error(),
				ScannedAt:    now,
				ScanDuration: time.Since(r.t0),
			},
		)
		return
	}
	seen := make(map[string]bool, len(r.ents))
	for _, le := range r.ents {
		seen[le.Name] = true
	}
	for i, o := range r.obs {
		l.setLock(r.changed[i].Name, o)
	}
	if e := readLegacy(l.ws.LegacyLock); e != nil {
		seen[e.Name] = true
		if old, ok := l.e.Lock(e.Name); full || !ok || old.Entry.Inode != e.Inode || old.Entry.Size != e.Size ||
			!old.Entry.ModTime.Equal(e.ModTime) {
			obs := l.probe.ObserveLock(*e, now)
			l.setLock(e.Name, &obs)
		}
	}
	for name := range l.e.Locks() {
		if !seen[name] && !keep[name] {
			l.setLock(name, nil)
		}
	}
	l.e.SetHealth(
		model.SourceLocks,
		withNote(
			model.SourceHealth{Status: model.StatusOK, ScannedAt: now, ScanDuration: time.Since(r.t0)},
			l.locksWatchMode(),
		),
	)
}

// reprobe re-observes the owner liveness of local records, and the worktrees whose turn
// it is (every one when all): each pass probes its share of the worktrees, so that each is
// looked at once per WorktreeEvery. A record is observed again in full only when a probe
// saw a change; only the records whose observation changed touch their items.
func (l *Model) reprobe(all bool) {
	e := l.e
	p := l.probe.memo() // a joined lock and lease name one pid and one worktree: probe each once
	l.passes++
	slots := l.worktreeSlots()
	due := func(kind byte, key string) bool {
		return all || slots == 1 || (fnv(kind, key)%slots) == l.passes%slots
	}
	for name, lo := range e.Locks() {
		if lo.Entry.Unreadable != nil || lo.PID <= 0 && lo.Worktree == model.WorktreeUnknown && lo.WorkStatic {
			continue
		}
		changed := p.ownerMoved(lo.PID, lo.Host, lo.Owner) ||
			!lo.WorkStatic && due('l', name) && p.worktreeMoved(lockWorktree(&lo.Entry.Record), lo.Host, lo.Worktree)
		if !changed {
			continue
		}
		n := p.ObserveLock(lo.Entry, lo.ReadAt)
		if n.Owner != lo.Owner || n.Worktree != lo.Worktree {
			e.SetLock(name, &n)
		}
	}
	for id, lo := range e.Leases() {
		host := l.probe.rowHost(lo.Lease.OwnerHost)
		if lo.Lease.Status.Terminal() || host != l.probe.Host {
			continue
		}
		if !p.ownerMoved(lo.Lease.OwnerPID, host, lo.Owner) &&
			!(due('e', id) && p.worktreeMoved(lo.Lease.WorktreePath, host, lo.Worktree)) {
			continue
		}
		n := p.ObserveLease(lo.Lease)
		if n.Owner != lo.Owner || n.Worktree != lo.Worktree {
			e.SetLease(id, &n)
		}
	}
	for id, so := range e.Sessions() {
		host := l.probe.rowHost(so.Session.Host)
		if host != l.probe.Host || !p.ownerMoved(so.Session.PID, host, so.Owner) {
			continue
		}
		n := p.ObserveSession(so.Session)
		if n.Owner != so.Owner {
			e.SetSession(id, &n)
		}
	}
}

// fnv is the FNV-1a hash of kind and key: which pass probes a record's worktree.
func fnv(kind byte, key string) uint64 {
	h := uint64(14695981039346656037)
	h = (h ^ uint64(kind)) * 1099511628211
	for i := 0; i < len(key); i++ {
		h = (h ^ uint64(key[i])) * 1099511628211
	}
	return h
}

// forEach calls f(0) … f(n-1) on every core (in this goroutine when n is small). f must
// be safe to call concurrently: it writes only its own index's results.
func forEach(n int, f func(i int)) {
	w := min(runtime.GOMAXPROCS(0), n/64+1)
	if w <= 1 {
		for i := range n {
			f(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range w {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				f(i)
			}
		}()
	}
	wg.Wait()
}
