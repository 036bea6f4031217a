package history

import (
	"cmp"
	"slices"
	"time"
)

// Finish orders the entries and joins what the events say about each lease to its span
// (the expiries of its claim and renewals; a span from the events alone for a lease whose
// row is gone). Call it once after the last Add; the questions call it when it was not.
// Evidence must not be shared between goroutines before Finish.
func (e *Evidence) Finish() {
	if e.sorted {
		return
	}
	e.mergeRows()
	byLease := map[string]int{}
	for i, sp := range e.Leases {
		byLease[sp.Lease] = i
	}
	for _, x := range e.expiries {
		if i, ok := byLease[x.lease]; ok {
			e.Leases[i].Expiries = append(e.Leases[i].Expiries, x.mark)
		}
	}
	if !e.State(SourceLeases).Read {
		e.spansFromEvents(byLease)
	}
	// An attempt on a lease (a heartbeat, a release, a reclaim) names the lease, not the
	// item: the lease's span says which item, and whose.
	lockItem := map[string]Item{}
	for _, l := range e.Locks {
		lockItem[l.LiveName] = l.Item
	}
	for i := range e.Entries {
		en := &e.Entries[i]
		if en.Item.Zero() && en.Lock != "" {
			en.Item = lockItem[en.Lock]
		}
		if en.Lease == "" || (!en.Item.Zero() && en.Session != "") {
			continue
		}
		if j, ok := byLease[en.Lease]; ok {
			if en.Item.Zero() {
				en.Item = e.Leases[j].Item
			}
			if en.Session == "" && en.Kind != KindRefused {
				en.Session = e.Leases[j].Session
			}
		}
	}
	slices.SortStableFunc(e.Entries, compareEntries)
	e.sorted = true
}

// spansFromEvents tells each lease's life from the events when the lease rows could not be
// read: its claim, and its end.
func (e *Evidence) spansFromEvents(byLease map[string]int) {
	slices.SortStableFunc(e.Entries, compareEntries)
	for _, en := range e.Entries {
		if en.Source != SourceEvents || en.Lease == "" {
			continue
		}
		i, ok := byLease[en.Lease]
		switch en.Kind {
		case KindClaim:
			if !ok {
				byLease[en.Lease] = len(e.Leases)
				e.Leases = append(
					e.Leases,
					LeaseSpan{Lease: en.Lease, Session: en.Session, Item: en.Item, Start: en.At, Source: SourceEvents},
				)
			}
		case KindRelease, KindReclaim, kindAbandon, kindExpire:
			if ok && !e.Leases[i].Ended {
				e.Leases[i].Ended, e.Leases[i].End, e.Leases[i].Status = true, en.At, string(en.Kind)
			}
		}
	}
	for _, x := range e.expiries {
		if i, ok := byLease[x.lease]; ok && e.Leases[i].Source == SourceEvents {
			e.Leases[i].Expiries = append(e.Leases[i].Expiries, x.mark)
		}
	}
}

// compareEntries orders by time (unknown times last), then source, then reference — the
// seed's timeline order (timestamp, source rank, event key; missing timestamps last).
func compareEntries(a, b Entry) int {
	switch {
	case a.At.IsZero() != b.At.IsZero():
		if a.At.IsZero() {
			return 1
		}
		return -1
	case !a.At.Equal(b.At):
		return a.At.Compare(b.At)
	}
	if c := cmp.Compare(a.Source.rank(), b.Source.rank()); c != 0 {
		return c
	}
	return cmp.Compare(a.Ref, b.Ref)
}

// Filter chooses a timeline's entries. Zero fields do not filter.
type Filter struct {
	Item    Item
	Session string
	// Since and Until bound the entries' times (inclusive); entries of unknown time are
	// kept unless a bound is set.
	Since, Until time.Time
}

// Timeline is a filtered, ordered list of entries and the gaps that touch it.
type Timeline struct {
	Filter  Filter        `json:"filter"`
	Read    time.Time     `json:"read"`
	Entries []Entry       `json:"entries"`
	Gaps    []Gap         `json:"gaps"`
	Sources []SourceState `json:"sources"`
}

// Timeline returns the entries f chooses, oldest first, and every gap that touches them:
// a source not read, not reaching back to f.Since, or unable to answer f's question.
func (e *Evidence) Timeline(f Filter) Timeline {
	e.Finish()
	tl := Timeline{Filter: f, Read: e.Read, Sources: slices.Clone(e.States), Entries: []Entry{}}
	for _, en := range e.Entries {
		if f.match(en) {
			tl.Entries = append(tl.Entries, en)
		}
	}
	tl.Gaps = e.gapsFor(f.Item, f.Session != "", f.Since, f.Until)
	return tl
}

func (f Filter) match(en Entry) bool {
	if !f.Item.Zero() && !en.Item.Same(f.Item) {
		return false
	}
	if f.Session != "" && en.Session != f.Session && en.Holder != f.Session {
		return false
	}
	if en.At.IsZero() {
		return f.Since.IsZero() && f.Until.IsZero()
	}
	if !f.Since.IsZero() && en.At.Before(f.Since) {
		return false
	}
	if !f.Until.IsZero() && en.At.After(f.Until) {
		return false
	}
	return true
}

// gapsFor returns the gaps touching [from, to] for an item (zero: any) and, when
// forSession, the gaps of session questions too.
func (e *Evidence) gapsFor(it Item, forSession bool, from, to time.Time) []Gap {
	out := []Gap{}
	all := e.Gaps
	if forSession {
		all = slices.Concat(e.Gaps, e.SessionGaps)
	}
	for _, g := range all {
		if !g.Item.Zero() && !it.Zero() && !g.Item.Same(it) {
			continue
		}
		if g.overlaps(from, to) {
			out = append(out, g)
		}
	}
	// A source that was never added is a gap too: nothing is known from it.
	for _, s := range []Source{SourceEvents, SourceLeases, SourceLocks, SourceAudit} {
		if st := e.State(s); !st.Read && st.Reason == "not read" {
			out = append(out, Gap{Kind: GapUnread, Source: s, Reason: "not read"})
		}
	}
	if !it.Zero() && !e.State(SourceGitea).Read {
		reason := e.State(SourceGitea).Reason
		if reason == "not read" {
			reason = "not read for this item"
		}
		if !hasGap(out, SourceGitea) {
			out = append(out, Gap{Kind: GapUnread, Source: SourceGitea, Item: it, Reason: reason})
		}
	}
	return out
}

func hasGap(gs []Gap, s Source) bool {
	for _, g := range gs {
		if g.Source == s {
			return true
		}
	}
	return false
}
