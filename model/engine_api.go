package model

import (
	"iter"
	"maps"
	"strings"

	"steward/gitea/gitearec"
	"steward/leases/leaserec"
)

// This file is what the live model (model/live) needs of an Engine besides the setters
// of engine.go: the rows it holds (to skip re-observing an unchanged one), the sources'
// health, and the lease ids locks name that still have to be looked up.

// Lock returns the lock file named name as last set.
func (e *Engine) Lock(name string) (*LockObs, bool) { lo, ok := e.locks[name]; return lo, ok }

// Lease returns the lease row id as last set.
func (e *Engine) Lease(id string) (*LeaseObs, bool) { lo, ok := e.leases[id]; return lo, ok }

// Session returns the session row id as last set.
func (e *Engine) Session(id string) (*SessionObs, bool) { so, ok := e.sessions[id]; return so, ok }

// Locks yields every lock file held, by name. The caller may SetLock while ranging.
func (e *Engine) Locks() iter.Seq2[string, *LockObs] { return maps.All(e.locks) }

// Leases yields every lease row held, by id. The caller may SetLease while ranging.
func (e *Engine) Leases() iter.Seq2[string, *LeaseObs] { return maps.All(e.leases) }

// Sessions yields every session row held, by id. The caller may SetSession while ranging.
func (e *Engine) Sessions() iter.Seq2[string, *SessionObs] { return maps.All(e.sessions) }

// ItemLeases yields the ids of the leases held on work item id.
func (e *Engine) ItemLeases(id int64) iter.Seq[string] { return e.itemLeases[id].all() }

// PutWorkItem records a work item row: the item its leases and events name.
func (e *Engine) PutWorkItem(w leaserec.WorkItem) {
	if it := itemOfRef(w.WorkRef); it != nil {
		e.putWorkItem(w.WorkItemID, *it)
	}
}

func (e *Engine) putWorkItem(id int64, it Item) {
	var old *Item
	if o, ok := e.workItems[id]; ok {
		if o == it {
			return
		}
		old = &o
	}
	e.workItems[id] = it
	e.countWorkItem(old, it)
}

// SetSessionsOmitted records how many ended sessions the last full DB read left out.
func (e *Engine) SetSessionsOmitted(n int) { e.sessionsOmitted = n }

// PendingRefs returns the lease ids that locks name and that neither the lease rows held
// nor an earlier lookup answer: look each up by id and give the answer to SetRef (an id
// whose lookup failed stays pending, nothing is concluded). Ids no lock names any more, or
// that a lease row now holds, are dropped.
func (e *Engine) PendingRefs() []string {
	var out []string
	for id := range e.refPending {
		if _, held := e.leases[id]; held || e.refUnits[id].len() == 0 {
			delete(e.refPending, id)
			continue
		}
		out = append(out, id)
	}
	return out
}

// SetRef records the answer of a lookup by id of a lease a lock names: lo, or nil when the
// id is proven absent. The units whose locks name it are re-derived.
func (e *Engine) SetRef(id string, lo *LeaseObs) {
	delete(e.refPending, id)
	e.refs[id] = lo
	for k := range e.refUnits[id].all() {
		e.dirty[k] = true
	}
}

// SetGitea replaces every Gitea fact and the clarification items (a poll) and the Gitea
// source's health: every unit they touch is re-derived.
func (e *Engine) SetGitea(facts []GiteaFact, clars []gitearec.Clarification, h SourceHealth) {
	e.setGitea(facts, e.clarifications(clars), h)
}

// Sources returns the sources' health as last set.
func (e *Engine) Sources() Sources {
	return Sources{Locks: e.env.locks, DB: e.env.db, Gitea: e.env.gitea}
}

// SetHealth changes source src's health; when its usability changes, every unit is
// re-derived (the honesty rules depend on it).
func (e *Engine) SetHealth(src Source, h SourceHealth) {
	switch src {
	case SourceLocks:
		e.setHealth(&e.env.locks, h)
	case SourceDB:
		e.setHealth(&e.env.db, h)
	case SourceGitea:
		e.gitea.health = h
		e.applyGitea()
	}
}

// ActivityNew reports whether events were added since the last Publish: an event-only
// commit changes no row an item derives from, yet the Activity view must show it.
func (e *Engine) ActivityNew() bool { return e.activityNew }

// SourcesSig is what the screen shows of the sources' health (status, partial, reason,
// notes), to tell whether it changed.
func (e *Engine) SourcesSig() string {
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

// SetClock says which clock the next snapshots are judged at: the caller passes that
// clock's instant as now (the model reads no clock).
func (e *Engine) SetClock(c Clock) {
	if c.Source == "" {
		c.Source = ClockHost
	}
	e.clock = c
}
