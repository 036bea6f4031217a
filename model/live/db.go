package live

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"time"

	"steward/leases"
	"steward/leases/leaserec"
	"steward/model"
)

// maxScopeItems bounds a scoped re-read: a batch of commits about more work
// items than this is read in full (one bulk read is then cheaper).
const maxScopeItems = 256

// eventsPage is how many events one read of data_version and events takes;
// a longer backlog is read in full.
const eventsPage = 1000

// dbRead is what the last full read of the DB said about its sections; a
// scoped read is applied only while it agrees (see scopeAgrees).
type dbRead struct {
	ok                          bool // a full read succeeded on the current reader
	scoped                      bool // a scoped read was applied since: the next resync reads in full
	sessions, leases, workItems leaserec.Health
	meta                        leaserec.Health
}

// reloadDB re-reads the DB when PRAGMA data_version moved (or force). Events
// past the cursor are read first: when every new event names its work item,
// only those items' leases and the sessions involved are re-read (a scoped
// read, costing what changed); otherwise — a commit that wrote no event (a
// foreign writer), an event about no item, a batch about many items, a
// section whose health moved, or force — the leases/sessions snapshot is
// re-read in full and diffed by id, so only changed rows touch their items.
func (l *Model) reloadDB(ctx context.Context, now time.Time, force bool) (moved bool) {
	return l.reload(ctx, now, force, false)
}

// reloadNotice re-reads the DB for a PostgreSQL notice: a transition's notice is sent
// at its commit, and every transition writes events, so the events past the cursor
// are what it changed. When none is new the notice was already read (notices are
// coalesced: an earlier read saw its commit), and the server's WAL position, which
// moves with every database of the cluster and its maintenance, proves nothing: no
// full read then, and the version is kept, so the periodic resync still reads in full
// a commit some other writer made without a notice.
func (l *Model) reloadNotice(ctx context.Context, now time.Time) {
	l.reload(ctx, now, false, true)
}

func (l *Model) reload(ctx context.Context, now time.Time, force, notice bool) (moved bool) {
	t0 := time.Now()
	if l.reader != nil && l.reader.Replaced() {
		// A new file was renamed over the DB (or it was removed): the open reader would
		// keep reading the old inode forever. Reopen by path.
		l.reader.Close()
		l.reader, l.busy = nil, false
	}
	if l.reader == nil {
		r, err := leases.OpenReader(l.ws.DBTarget())
		if err != nil {
			if aerr := leases.Accessible(l.ws.DBTarget()); errors.Is(aerr, fs.ErrPermission) {
				err = fmt.Errorf("%w (%w)", aerr, err) // SQLite's own message hides the errno
			}
			l.dbUnavailable(err, now, t0)
			return true
		}
		l.reader, force = r, true
		l.last = dbRead{}
		if l.dw == nil {
			if w, err := l.watchDB(); err == nil {
				l.dw = w // picked up by the loop on its next start; resync covers until then
			}
		}
	}
	dv, err := l.reader.DataVersion(ctx)
	if err != nil {
		if l.dbBusy(err, now) {
			return true
		}
		l.reader.Close()
		l.reader = nil
		l.dbUnavailable(err, now, t0)
		return true
	}
	l.readClock(ctx)
	if l.busy {
		force, l.busy = true, false // a read works again: re-read and clear the busy note
	}
	if dv == l.dv && !force {
		return false
	}
	// data_version and the events of the same snapshot: a version that moved
	// with no event is a commit that wrote none.
	ve, everr := l.reader.EventsAtVersion(ctx, l.cursor, eventsPage)
	evs, eh, cursor := ve.Events, ve.Health, l.cursor
	if everr == nil {
		dv = ve.DataVersion
		if len(evs) > 0 {
			cursor = evs[len(evs)-1].EventID
		}
		if ve.More {
			var more []leaserec.Event
			var mh leaserec.Health
			more, mh, cursor, everr = readEvents(ctx, l.reader, cursor)
			evs = append(evs, more...)
			if eh.Status == leaserec.HealthOK {
				eh = mh
			}
		}
	}
	if everr != nil {
		eh = leases.HealthFromError(everr)
	}
	l.evHealth = eh
	if notice && !force && everr == nil && len(evs) == 0 && l.last.ok {
		return false
	}
	if !force && everr == nil && !ve.More && l.last.ok && l.applyScoped(ctx, evs, eh, now, t0) {
		l.dv, l.cursor = dv, cursor
		l.e.AddEvents(evs)
		l.scopedN.Add(1)
		return true
	}
	s, err := l.reader.Snapshot(ctx, leases.ReadOptions{})
	if err != nil {
		if l.dbBusy(err, now) {
			return true
		}
		l.dbUnavailable(err, now, t0)
		return true
	}
	l.dv, l.cursor = dv, cursor
	l.applyDB(ctx, s, eh, now, t0)
	l.e.AddEvents(evs)
	l.fullN.Add(1)
	l.bgStale = l.bgC != nil // a background read begun before this one is older than it
	return true
}

// bgFull is a full read of the DB made beside the loop.
type bgFull struct {
	s   *leases.Snapshot
	err error
	t0  time.Time
}

// readBeside starts a full read of the DB on its own reader, beside the loop, and reports
// whether it did: the periodic resync's full read no longer holds every change that lands
// meanwhile. Only for a SQLite DB that is open and read; never two at once.
func (l *Model) readBeside(ctx context.Context) bool {
	if l.bgC != nil || l.reader == nil || !l.last.ok || l.busy || l.ws.DBTarget().Postgres() {
		return l.bgC != nil
	}
	ch := make(chan bgFull, 1)
	l.bgC, l.bgScope, l.bgStale = ch, leases.Scope{}, false
	target, hook := l.ws.DBTarget(), l.bgHook
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		b := bgFull{t0: time.Now()}
		r, err := leases.OpenReader(target)
		if err == nil {
			b.s, b.err = r.Snapshot(ctx, leases.ReadOptions{})
			r.Close()
		} else {
			b.err = err
		}
		if hook != nil {
			hook()
		}
		ch <- b
	}()
	return true
}

// applyBeside applies a background full read: diffed by id as any full read, then what
// the scoped reads applied while it was in flight is read again (those rows may have
// changed after its snapshot), all before the next publish. A read that failed, or that a
// full read applied meanwhile made older than what is held, is not applied: a failed one
// is made again here, where its error is handled (busy, unavailable).
func (l *Model) applyBeside(ctx context.Context, b bgFull, now time.Time) {
	l.bgC = nil
	switch {
	case ctx.Err() != nil: // closing
		return
	case l.bgStale:
		return
	case b.err != nil || l.reader == nil || !l.last.ok:
		l.reloadDB(ctx, now, true)
		return
	}
	l.applyDB(ctx, b.s, l.evHealth, now, b.t0)
	l.fullN.Add(1)
	if sc := l.bgScope; len(sc.WorkItemIDs)+len(sc.LeaseIDs)+len(sc.SessionIDs) > 0 {
		if !l.applyScope(ctx, sc, now, b.t0) {
			l.reloadDB(ctx, now, true)
		}
	}
	l.bgScope = leases.Scope{}
}

func (l *Model) dbUnavailable(err error, now, t0 time.Time) {
	l.last = dbRead{}
	h := model.HealthOf(leases.HealthFromError(err), now, time.Since(t0))
	l.e.SetSections(model.DBSections{})
	l.e.SetHealth(model.SourceDB, h)
}

// applyDB applies a full read: every row is diffed by id against what is
// held, rows no longer read are dropped.
func (l *Model) applyDB(ctx context.Context, s *leases.Snapshot, eh leaserec.Health, now, t0 time.Time) {
	e := l.e
	for _, w := range s.WorkItems {
		e.PutWorkItem(sharedWorkItem(w))
	}
	e.SetSessionsOmitted(s.SessionsOmitted)
	applyRows(s.Sessions, rowKind[leaserec.Session, model.SessionObs]{
		id:      func(x *leaserec.Session) string { return x.SessionID },
		same:    func(o *model.SessionObs, x *leaserec.Session) bool { return sameSession(o.Session, *x) },
		observe: l.probe.ObserveSession,
		held:    e.Session, set: e.SetSession, all: e.Sessions,
	})
	applyRows(s.Leases, rowKind[leaserec.Lease, model.LeaseObs]{
		id:      func(x *leaserec.Lease) string { return x.LeaseID },
		same:    func(o *model.LeaseObs, x *leaserec.Lease) bool { return sameLease(o.Lease, *x) },
		observe: l.probe.ObserveLease,
		held:    e.Lease, set: e.SetLease, all: e.Leases,
	})
	l.lookupMissingRefs(ctx)
	l.last = dbRead{
		ok:        true,
		sessions:  s.SessionsHealth,
		leases:    s.LeasesHealth,
		workItems: s.WorkItemsHealth,
		meta:      s.MetaHealth,
	}
	l.setDBHealth(eh, now, t0)
}

// applyScoped re-reads what the events evs name — their work items with every
// lease held or active on them, the leases and sessions their detail names,
// and the sessions of those leases — and applies it. It reports false, having
// changed nothing, when the events cannot scope the change: none arrived
// (data_version moved with no event: a foreign writer), one names no work
// item, they name more than maxScopeItems items, or the scoped read failed or
// disagrees with the last full read about a section's health.
func (l *Model) applyScoped(ctx context.Context, evs []leaserec.Event, eh leaserec.Health, now, t0 time.Time) bool {
	if len(evs) == 0 {
		return false
	}
	e := l.e
	items := map[int64]bool{}
	named := map[string]bool{}
	var sc leases.Scope
	for _, x := range evs {
		if x.WorkItemID <= 0 {
			return false
		}
		if !items[x.WorkItemID] {
			items[x.WorkItemID] = true
			sc.WorkItemIDs = append(sc.WorkItemIDs, x.WorkItemID)
		}
		for _, k := range [...]string{"lease_id", "holding_lease_id"} {
			if v, _ := x.Detail[k].(string); v != "" {
				named[v] = true
			}
		}
		sc.SessionIDs = append(sc.SessionIDs, x.SessionID)
		for _, k := range [...]string{"requesting_session_id", "holding_session_id"} {
			if v, _ := x.Detail[k].(string); v != "" {
				sc.SessionIDs = append(sc.SessionIDs, v)
			}
		}
	}
	if len(items) > maxScopeItems {
		return false
	}
	for id := range items {
		for lid := range e.ItemLeases(id) {
			named[lid] = true
		}
	}
	for lid := range named {
		sc.LeaseIDs = append(sc.LeaseIDs, lid)
		if lo, ok := e.Lease(lid); ok {
			sc.SessionIDs = append(sc.SessionIDs, lo.Lease.SessionID) // it may move to another session
		}
	}
	if !l.applyScope(ctx, sc, now, t0) {
		return false
	}
	if l.bgC != nil { // read again once the background full read is applied
		l.bgScope.WorkItemIDs = append(l.bgScope.WorkItemIDs, sc.WorkItemIDs...)
		l.bgScope.LeaseIDs = append(l.bgScope.LeaseIDs, sc.LeaseIDs...)
		l.bgScope.SessionIDs = append(l.bgScope.SessionIDs, sc.SessionIDs...)
	}
	return true
}

// rowKind is how applyRows reaches one kind of DB row (R: a session or a lease) and its
// observation (O) in the engine.
type rowKind[R, O any] struct {
	id      func(*R) string
	same    func(held *O, row *R) bool // the row is what the held observation was made of
	observe func(R) O
	held    func(id string) (*O, bool)
	set     func(id string, o *O) // nil drops the row
	all     func() iter.Seq2[string, *O]
}

// applyRows brings the engine's rows of one kind to a full read: the rows that are new or
// changed are observed, probed on every core, and set; the rows no longer read are dropped.
func applyRows[R, O any](rows []R, k rowKind[R, O]) {
	seen := make(map[string]bool, len(rows))
	var changed []int
	for i := range rows {
		id := k.id(&rows[i])
		seen[id] = true
		if old, ok := k.held(id); !ok || !k.same(old, &rows[i]) {
			changed = append(changed, i)
		}
	}
	// One allocation per observation, not one array: a kept observation would keep the
	// whole array alive after the others were replaced.
	obs := make([]*O, len(changed))
	forEach(len(changed), func(i int) { o := k.observe(rows[changed[i]]); obs[i] = &o })
	for i, o := range obs {
		k.set(k.id(&rows[changed[i]]), o)
	}
	for id := range k.all() {
		if !seen[id] {
			k.set(id, nil)
		}
	}
}

// applyScope reads the rows sc names and applies them; false, having changed nothing,
// when the read failed or disagrees with the last full read about a section's health.
func (l *Model) applyScope(ctx context.Context, sc leases.Scope, now, t0 time.Time) bool {
	e := l.e
	r, err := l.reader.ReadScope(ctx, sc)
	if err != nil || !leases.ScopeAgrees(r.LeasesHealth, l.last.leases) ||
		!leases.ScopeAgrees(r.SessionsHealth, l.last.sessions) ||
		!leases.ScopeAgrees(r.WorkItemsHealth, l.last.workItems) {
		return false
	}
	for _, w := range r.WorkItems {
		e.PutWorkItem(sharedWorkItem(w))
	}
	got := make(map[string]bool, len(r.Sessions))
	for _, x := range r.Sessions {
		got[x.SessionID] = true
		l.putSession(x)
	}
	for _, id := range r.SessionIDs {
		if _, held := e.Session(id); held && !got[id] {
			e.SetSession(id, nil) // asked for by id, not there: the row is gone
		}
	}
	got = make(map[string]bool, len(r.Leases))
	for _, x := range r.Leases {
		got[x.LeaseID] = true
		l.putLease(x)
	}
	for _, id := range sc.LeaseIDs {
		if _, held := e.Lease(id); held && !got[id] {
			e.SetLease(id, nil)
		}
	}
	l.lookupMissingRefs(ctx)
	l.last.scoped = true
	l.setDBHealth(l.evHealth, now, t0)
	return true
}

// setDBHealth sets the DB's sections and health from the last full read's
// sections and the events just read.
func (l *Model) setDBHealth(eh leaserec.Health, now, t0 time.Time) {
	d := l.last
	l.e.SetSections(
		model.DBSections{Sessions: d.sessions.Status == leaserec.HealthOK, Leases: d.leases.Status == leaserec.HealthOK,
			WorkItems: d.workItems.Status == leaserec.HealthOK, Events: eh.Status == leaserec.HealthOK},
	)
	h := model.DBHealth(d.sessions, d.leases, d.workItems, eh, d.meta, now, time.Since(t0))
	l.e.SetHealth(model.SourceDB, withNote(h, l.dbWatchMode()))
}

// putSession records a session row read from the DB when it changed.
func (l *Model) putSession(x leaserec.Session) {
	if old, ok := l.e.Session(x.SessionID); ok && sameSession(old.Session, x) {
		return
	}
	so := l.probe.ObserveSession(x)
	l.e.SetSession(x.SessionID, &so)
}

// putLease records a lease row read from the DB when it changed.
func (l *Model) putLease(x leaserec.Lease) {
	if old, ok := l.e.Lease(x.LeaseID); ok && sameLease(old.Lease, x) {
		return
	}
	lo := l.probe.ObserveLease(x)
	l.e.SetLease(x.LeaseID, &lo)
}

// lookupMissingRefs reads, by id, the leases that locks name and the read
// set lacks (pending since a lock named them or they left the read set).
func (l *Model) lookupMissingRefs(ctx context.Context) {
	p := l.probe
	for _, id := range l.e.PendingRefs() {
		x, found, err := l.reader.LeaseByID(ctx, id)
		switch {
		case err != nil:
			continue // unknown: no conclusion; looked up again on the next read
		case found:
			o := p.ObserveLease(x)
			l.e.SetRef(id, &o)
		default:
			l.e.SetRef(id, nil)
		}
	}
}

func sameSession(a, b leaserec.Session) bool {
	return a.Status == b.Status && a.PID == b.PID && a.Host == b.Host && a.LastHeartbeatAt.Raw == b.LastHeartbeatAt.Raw &&
		a.EndedAt.Raw == b.EndedAt.Raw && a.Role == b.Role && a.Profile == b.Profile
}

func sameLease(a, b leaserec.Lease) bool {
	return a.Status == b.Status && a.SessionID == b.SessionID && a.ExpiresAt.Raw == b.ExpiresAt.Raw &&
		a.LastHeartbeatAt.Raw == b.LastHeartbeatAt.Raw && a.HeartbeatCount == b.HeartbeatCount && a.Phase == b.Phase &&
		a.ReleasedAt.Raw == b.ReleasedAt.Raw && a.AdoptedBySessionID == b.AdoptedBySessionID &&
		a.ProvenanceRaw == b.ProvenanceRaw &&
		a.WorktreePath == b.WorktreePath && a.OwnerPID == b.OwnerPID && a.OwnerHost == b.OwnerHost && a.Work == b.Work &&
		a.Role == b.Role && a.TaskClass == b.TaskClass && a.CreatedAt.Raw == b.CreatedAt.Raw && a.WorkItemID == b.WorkItemID
}
