package model

import (
	"container/heap"
	"sort"
	"time"

	"steward/leases/leaserec"
)

func (e *Engine) deriveSession(id string, now time.Time) {
	so := e.sessions[id]
	var vals []*Session
	if so != nil {
		var ids []string
		for l := range e.sessLeases[id].all() {
			if leaseActive(&e.leases[l].Lease) {
				ids = append(ids, l)
			}
		}
		out, next := sessionOut(so, ids, now)
		if !next.IsZero() {
			heap.Push(&e.dl, deadline{at: next, key: id, session: true})
		}
		vals = []*Session{out}
	}
	e.sessKeys[id] = e.sessOut.replace(e.sessKeys[id], id, vals)
}

// sessionOut is session so as the snapshot lists it, holding the active leases ids (in any
// order), and the instant its heartbeat goes stale when that is after now (zero otherwise).
func sessionOut(so *SessionObs, ids []string, now time.Time) (*Session, time.Time) {
	s := so.Session
	out := &Session{SessionID: s.SessionID, Role: s.Role, Profile: s.Profile, PID: s.PID, Host: s.Host, Status: s.Status,
		Liveness: so.Owner, Live: leaserec.SessionLive(s, leaserec.ProcessState(so.Owner), now), Leases: []string{}}
	var next time.Time
	if s.LastHeartbeatAt.OK() {
		out.LastHeartbeat = s.LastHeartbeatAt.Time
		if t := s.LastHeartbeatAt.Time.Add(leaserec.SessionHeartbeatStale); t.After(now) {
			next = t
		}
	}
	if s.EndedAt.OK() {
		out.EndedAt = s.EndedAt.Time
	}
	out.Leases = append(out.Leases, ids...)
	sort.Strings(out.Leases)
	return out, next
}

// Tick marks the units whose deadline passed by now and re-derives them.
func (e *Engine) Tick(now time.Time) int {
	for e.dl.Len() > 0 && !e.dl[0].at.After(now) {
		d := heap.Pop(&e.dl).(deadline)
		if d.session {
			e.dirtySess[d.key] = true
		} else if u := e.units[d.key]; u != nil && u.next.Equal(d.at) {
			e.dirty[d.key] = true
		}
	}
	n := e.Flush(now)
	e.compact()
	return n
}

// current reports whether d is its unit's or session's pending deadline (others are stale:
// the unit was re-derived since, or the session heartbeated).
func (e *Engine) current(d deadline) bool {
	if d.session {
		so := e.sessions[d.key]
		return so != nil && so.Session.LastHeartbeatAt.OK() &&
			so.Session.LastHeartbeatAt.Time.Add(leaserec.SessionHeartbeatStale).Equal(d.at)
	}
	u := e.units[d.key]
	return u != nil && u.next.Equal(d.at)
}

// compact drops stale heap entries once the heap grew well past the units: every
// re-derivation pushes its unit's next deadline and leaves the old one to be skipped when
// popped, so without this a busy model would hold one entry per re-derivation until its
// time passed. Amortized, it costs O(1) per push.
func (e *Engine) compact() {
	if len(e.dl) > 2*len(e.units)+len(e.sessions)+64 {
		e.compactNow()
	}
}

func (e *Engine) compactNow() {
	keep := make(deadlines, 0, len(e.units)+len(e.sessions))
	type who struct {
		key     string
		session bool
	}
	seen := make(map[who]bool, len(e.units)+len(e.sessions))
	for _, d := range e.dl {
		if w := (who{d.key, d.session}); !seen[w] && e.current(d) {
			seen[w] = true
			keep = append(keep, d)
		}
	}
	e.dl = keep
	heap.Init(&e.dl)
}

// Next is the earliest pending deadline (zero when none).
func (e *Engine) Next() time.Time {
	for e.dl.Len() > 0 {
		d := e.dl[0]
		if d.session {
			return d.at
		}
		if u := e.units[d.key]; u != nil && u.next.Equal(d.at) {
			return d.at
		}
		heap.Pop(&e.dl) // stale entry
	}
	return time.Time{}
}

type deadline struct {
	at      time.Time
	key     string // a unit's key, or a session's id when session
	session bool
}

// deadlines is a min-heap of the next instants at which a unit's derivation
// changes.
type deadlines []deadline

func (h deadlines) Len() int           { return len(h) }
func (h deadlines) Less(i, j int) bool { return h[i].at.Before(h[j].at) }
func (h deadlines) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *deadlines) Push(x any)        { *h = append(*h, x.(deadline)) }
func (h *deadlines) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
