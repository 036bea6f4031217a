package model

import (
	"slices"
	"strconv"
	"time"

	"steward/leases/leaserec"
	"steward/locks/lockrec"
)

// This file is Build a page of items at a time, for a one-shot read of a large fleet
// (`steward status --json`): the control-plane DB's rows are held whole (they are the
// index every page joins with), the lock files are read a page at a time by whoever drives
// the Stream, and each page is derived by an engine of its own and dropped. What a page
// contributes is handed on (Page); only the short lists (orphans, contention) are kept by
// the caller. The result is the snapshot Build derives from the same input: the units are
// the same, each derived from the same rows and files by the same code.
//
// Units read one another in one way only: an item's units under other remote names say
// whether it is claimed there (unitIn.claimedAs). So a page holds whole groups — the units
// of one item under every remote name (aliasKey), or a unit that names no item alone —
// and a lock file is planned into the group its name gives (locks.Listing.NameKey). A file whose record
// names another item than its name is carried to that group's page when it is still to
// come, or derived in the last page when no plan names its group; when its group was
// derived already, the stream cannot be kept (ErrReplan) and the caller builds whole.

// ErrReplan says that a streamed derivation met a lock file whose record names an item
// already derived without it: the caller derives the whole input instead (Build).
type ErrReplan struct{ File, Group string }

func (e *ErrReplan) Error() string {
	return "lock " + e.File + " names an item derived before it was read"
}

// Stream derives the snapshot of a fleet a page of groups at a time.
type Stream struct {
	cfg  Config
	now  time.Time
	base env
	db   *Input
	// meta holds the work items and events (activity, the items of refused claims) and
	// publishes what is not per item; it derives no unit.
	meta    *Engine
	leases  *LeaseStore
	sessIx  map[string]int32   // session id → index in db.Sessions
	refused map[string][]int32 // unit key → its claim.refused events
	// groups: group key → the planned units' keys; done: groups derived.
	groups map[string][]string
	done   map[string]bool
}

// GroupOf is the group a unit of key k and item it (nil: none) is derived in.
func groupOf(k string, it *Item) string {
	if it == nil {
		return "\x01" + k
	}
	return aliasKey(it)
}

// NewStream holds the DB side of in (sessions, work items, events, the sources' health,
// findings) and the lease rows of ls to derive pages of lock files against at now. in holds
// no lock files (each page brings its own) and no leases (ls holds them).
func NewStream(in *Input, ls *LeaseStore, cfg Config, now time.Time) *Stream {
	s := &Stream{cfg: cfg, now: now, db: in, meta: NewEngine(cfg), leases: ls, sessIx: map[string]int32{},
		refused: map[string][]int32{}, groups: map[string][]string{}, done: map[string]bool{}}
	m := s.meta
	m.env.locks, m.env.db, m.env.gitea, m.env.sect = in.LocksHealth, in.DBHealth, in.GiteaHealth, in.DB
	// The work items the events name: what an event's item is (Build holds them all; the
	// leases carry their own).
	named := map[int64]bool{}
	for _, x := range in.Events {
		named[x.WorkItemID] = true
	}
	for _, w := range in.WorkItems {
		if named[w.WorkItemID] {
			m.PutWorkItem(w)
		}
	}
	m.sessionsOmitted = in.SessionsOmitted
	m.SetClock(in.Clock)
	m.findings = append(m.findings, in.Findings...)
	for i := range in.Sessions {
		s.sessIx[in.Sessions[i].Session.SessionID] = int32(i)
	}
	for g, us := range ls.units {
		s.groups[g] = slices.Clone(us)
	}
	for i, x := range in.Events {
		if x.EventType != "claim.refused" {
			continue
		}
		k, it := "wi\x00"+strconv.FormatInt(x.WorkItemID, 10), (*Item)(nil)
		if w, ok := m.workItems[x.WorkItemID]; ok {
			k, it = w.key(), &w
		}
		s.refused[k] = append(s.refused[k], int32(i))
		s.plan(k, it)
	}
	// The activity and the refused claims' items as Build reads them (AddEvents): units
	// made here are never derived (no Flush).
	m.AddEvents(in.Events)
	s.base = m.env
	return s
}

// plan records that the unit k (item it) is derived in its group.
func (s *Stream) plan(k string, it *Item) string {
	g := groupOf(k, it)
	if !slices.Contains(s.groups[g], k) {
		s.groups[g] = append(s.groups[g], k)
	}
	return g
}

// PlanLockName plans the lock file name into the group its name gives and returns that
// group ("" when the name gives no item: the file is grouped once read).
func (s *Stream) PlanLockName(name string, k lockrec.Key, ok bool) string {
	if !ok {
		return ""
	}
	it := itemOfKey(k)
	return s.plan(it.key(), it)
}

// LockGroup is the group a lock file as read is derived in.
func LockGroup(lo *LockObs) string {
	k, it := lockUnitKey(lo)
	return groupOf(k, it)
}

// Planned reports whether group g is planned and whether it was derived already.
func (s *Stream) Planned(g string) (planned, done bool) {
	_, planned = s.groups[g]
	return planned, s.done[g]
}

// Groups returns every planned group, sorted.
func (s *Stream) Groups() []string {
	out := make([]string, 0, len(s.groups))
	for g := range s.groups {
		out = append(out, g)
	}
	slices.Sort(out)
	return out
}

// Pack compresses the lease rows held, in the order of groups (Groups): pages derived in
// that order decompress each chunk once.
func (s *Stream) Pack(groups []string) error { return s.leases.Pack(groups) }

// HasLease reports whether the DB's rows hold lease id.
func (s *Stream) HasLease(id string) bool { _, ok := s.leases.byID[id]; return ok }

// Keyed is one entry of a derived list under its sort key (the order of the snapshot's
// list is the order of the keys).
type Keyed[T any] struct {
	Key string
	Val *T
}

// Page is what one page of groups contributes to the snapshot: each list in key order.
type Page struct {
	Claims     []Keyed[Claim]
	Orphans    []Keyed[Orphan]
	Contention []Keyed[Contention]
	Items      []Keyed[ItemState]
}

// Derive derives the groups gs with the lock files ls (every file of those groups: the
// caller read them) and the leases looked up by id that ls name (refs: nil value =
// proven absent). The groups are marked derived.
func (s *Stream) Derive(gs []string, ls []*LockObs, refs map[string]*LeaseObs) Page {
	e := NewEngine(s.cfg)
	e.env = s.base
	e.clock = s.meta.clock
	var evs []leaserec.Event
	for _, g := range gs {
		s.done[g] = true
		rows := s.leases.group(g)
		for i := range rows {
			lo := &rows[i]
			if si, ok := s.sessIx[lo.Lease.SessionID]; ok {
				e.sessions[lo.Lease.SessionID] = &s.db.Sessions[si]
			}
			e.SetLease(lo.Lease.LeaseID, lo)
		}
		for _, k := range s.groups[g] {
			for _, ix := range s.refused[k] {
				x := s.db.Events[ix]
				if it, ok := s.meta.workItems[x.WorkItemID]; ok {
					e.workItems[x.WorkItemID] = it
				}
				evs = append(evs, x)
			}
		}
	}
	if e.env.locksObserved() {
		for _, lo := range ls {
			id := lo.Entry.Record.LeaseID
			if id == "" || lo.Entry.Unreadable != nil {
				continue
			}
			if _, held := e.leases[id]; held {
				continue
			}
			if lo, ok := s.leases.byLeaseID(id); ok {
				e.refs[id] = lo
			} else if l, ok := refs[id]; ok {
				e.refs[id] = l
			}
		}
		for _, lo := range ls {
			e.SetLock(lo.Entry.Name, lo)
		}
	}
	// Each unit's refused claims are in the DB's order, as Build adds them (a unit's
	// events are appended in the order read; units do not read one another's).
	e.AddEvents(evs)
	e.Flush(s.now)
	return Page{Claims: keyed(&e.claims), Orphans: keyed(&e.orphans), Contention: keyed(&e.contention),
		Items: keyed(&e.items)}
}

func keyed[T any](s *sorted[T]) []Keyed[T] {
	out := make([]Keyed[T], len(s.keys))
	for i := range s.keys {
		out[i] = Keyed[T]{s.keys[i], s.vals[i]}
	}
	return out
}

// Sessions yields the snapshot's sessions in its order (by session id), each derived as
// Build derives it.
func (s *Stream) Sessions(yield func(*Session) bool) {
	type ks struct {
		key string
		ix  int32
	}
	// The last row of an id wins, as SetSession keeps it.
	all := make([]ks, 0, len(s.sessIx))
	for id, ix := range s.sessIx {
		all = append(all, ks{id + "\x00" + "0000", ix})
	}
	slices.SortFunc(all, func(a, b ks) int {
		switch {
		case a.key < b.key:
			return -1
		case a.key > b.key:
			return 1
		}
		return 0
	})
	held := map[string][]string{}
	for _, a := range s.leases.active {
		if _, ok := s.sessIx[a[0]]; ok {
			held[a[0]] = append(held[a[0]], a[1])
		}
	}
	for _, x := range all {
		so := &s.db.Sessions[x.ix]
		out, _ := sessionOut(so, held[so.Session.SessionID], s.now)
		if !yield(out) {
			return
		}
	}
}

// Summary is the snapshot without its per-item lists (claims, items, sessions): the
// sources' health, clock, findings, activity, inventory. locks is the lock directory's
// health once every page was read; findings are the lock files' findings, in their order.
func (s *Stream) Summary(locks SourceHealth, findings []string) *Snapshot {
	s.meta.env.locks = locks
	s.meta.findings = append(s.meta.findings, findings...)
	return s.meta.Publish(s.now)
}
