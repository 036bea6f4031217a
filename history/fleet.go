package history

import (
	"cmp"
	"slices"
	"time"
)

// ClaimState is what is known of a claim at an instant.
type ClaimState string

// The states of a reconstructed claim.
const (
	// ClaimHeld: live, and its expiry at that instant is known to be later.
	ClaimHeld ClaimState = "held"
	// ClaimPastExpiry: still active at that instant though its expiry had passed (an
	// orphan the sweep or a reclaim had not ended yet).
	ClaimPastExpiry ClaimState = "past_expiry"
	// ClaimExpiryUnknown: live, but its expiry at that instant is not recorded (renewals
	// of the seed's events carry no expiry; lock-file heartbeats record no event).
	ClaimExpiryUnknown ClaimState = "expiry_unknown"
	// ClaimLockOnly: a lock generation was live, and no lease row or event tells of a
	// lease then — a claim the DB does not know.
	ClaimLockOnly ClaimState = "lock_only"
)

// Claim is one claim live at the instant of a Fleet.
type Claim struct {
	Item    Item       `json:"item"`
	Session string     `json:"session,omitempty"`
	Lease   string     `json:"lease,omitempty"`
	Role    string     `json:"role,omitempty"`
	Since   time.Time  `json:"since,omitzero"`
	State   ClaimState `json:"state"`
	// Expires is the expiry in force at the instant (zero when unknown).
	Expires time.Time `json:"expires,omitzero"`
	// Ended is when it ended after the instant (zero: still live when read, or unknown).
	Ended time.Time `json:"ended,omitzero"`
	// Lock is the lock generation live at the instant (zero when none is known).
	LockFile       string   `json:"lock_file,omitempty"`
	LockGeneration int64    `json:"lock_generation,omitempty"`
	Sources        []Source `json:"sources"`
	Notes          []string `json:"notes,omitempty"`
}

// Collision is an item with more than one live claim at the instant.
type Collision struct {
	Item     Item     `json:"item"`
	Sessions []string `json:"sessions"`
}

// Contention is the refused claims on one item in the window before the instant.
type Contention struct {
	Item     Item     `json:"item"`
	Refusals int      `json:"refusals"`
	Sessions []string `json:"sessions"` // who was refused
	Holders  []string `json:"holders"`  // who held it
}

// Fleet is the fleet reconstructed at one instant.
type Fleet struct {
	At     time.Time `json:"at"`
	Read   time.Time `json:"read"`
	Window string    `json:"contention_window"`
	// Claims are the claims live at At, by item.
	Claims     []Claim      `json:"claims"`
	Collisions []Collision  `json:"collisions"`
	Contention []Contention `json:"contention"`
	// Unknown says what cannot be known at At, and why: the gaps touching it and claims
	// whose span cannot be placed.
	Unknown []string      `json:"unknown"`
	Gaps    []Gap         `json:"gaps"`
	Sources []SourceState `json:"sources"`
}

// At reconstructs the fleet at t: the claims live then (from the lease rows, or the events
// without them, joined with the lock generations live then), the items with more than one,
// and the refused claims in the window before t. What cannot be placed is in Unknown.
func (e *Evidence) At(t time.Time, window time.Duration) Fleet {
	e.Finish()
	f := Fleet{At: t, Read: e.Read, Window: window.String(), Claims: []Claim{}, Collisions: []Collision{},
		Contention: []Contention{}, Unknown: []string{}, Sources: slices.Clone(e.States)}
	usedLock := map[int]bool{}
	for _, sp := range e.Leases {
		switch {
		case sp.Start.IsZero():
			f.Unknown = append(
				f.Unknown,
				"lease "+sp.Lease+" on "+sp.Item.String()+" records no start: whether it was live is unknown",
			)
			continue
		case sp.Start.After(t):
			continue
		case sp.Ended && sp.End.IsZero():
			f.Unknown = append(
				f.Unknown,
				"lease "+sp.Lease+" on "+sp.Item.String()+" ("+sp.Session+") began "+stamp(sp.Start)+
					" and ended at an unrecorded time: it may have been live",
			)
			continue
		case sp.Ended && !sp.End.After(t):
			continue
		}
		c := Claim{
			Item:    sp.Item,
			Session: sp.Session,
			Lease:   sp.Lease,
			Role:    sp.Role,
			Since:   sp.Start,
			Sources: []Source{sp.Source},
		}
		if sp.Ended {
			c.Ended = sp.End
		}
		c.State, c.Expires, c.Notes = expiryAt(sp, t)
		if i := e.lockAt(sp.Item, t, usedLock); i >= 0 {
			l := e.Locks[i]
			usedLock[i] = true
			c.LockFile, c.LockGeneration = l.File, l.Generation
			c.Sources = append(c.Sources, SourceLocks)
		} else if e.State(SourceLocks).Read {
			c.Notes = append(c.Notes, "no lock generation is known live then (a lock deleted without an archive leaves no "+
				"trace)")
		}
		f.Claims = append(f.Claims, c)
	}
	for i, l := range e.Locks {
		if usedLock[i] || !lockLive(l, t) {
			continue
		}
		c := Claim{Item: l.Item, Session: l.Session, Since: l.Start, State: ClaimLockOnly, LockFile: l.File,
			LockGeneration: l.Generation, Sources: []Source{SourceLocks},
			Notes: []string{"no lease row or event tells of a lease then"}}
		if !l.Live {
			c.Ended = l.End
		}
		if !l.ExpiresAt.IsZero() && !l.ExpiresAt.After(t) {
			c.Notes = append(c.Notes, "its lock's expiry "+stamp(l.ExpiresAt)+" had passed")
		}
		f.Claims = append(f.Claims, c)
	}
	slices.SortFunc(f.Claims, func(a, b Claim) int {
		return cmp.Or(compareItems(a.Item, b.Item), a.Since.Compare(b.Since), cmp.Compare(a.Session, b.Session))
	})
	f.Collisions = collisions(f.Claims)
	f.Contention = e.contention(t.Add(-window), t)
	f.Gaps = e.gapsFor(Item{}, false, t, t)
	for _, g := range f.Gaps {
		f.Unknown = append(f.Unknown, g.String())
	}
	return f
}

// expiryAt is a lease's expiry in force at t: the last expiry recorded at or before t; or,
// with none recorded, past for certain when even its latest expiry is not after t.
func expiryAt(sp LeaseSpan, t time.Time) (ClaimState, time.Time, []string) {
	var exp time.Time
	for _, m := range sp.Expiries {
		if !m.At.After(t) {
			exp = m.Expires
		}
	}
	if exp.IsZero() && !sp.ExpiresAt.IsZero() && !sp.ExpiresAt.After(t) {
		exp = sp.ExpiresAt // expiry only moves forward: it was past at t too
	}
	switch {
	case exp.IsZero():
		return ClaimExpiryUnknown, time.Time{}, []string{
			"its expiry at that instant is not recorded (the renewals before it recorded no expiry)",
		}
	case !exp.After(t):
		return ClaimPastExpiry, exp, nil
	}
	return ClaimHeld, exp, nil
}

func lockLive(l LockSpan, t time.Time) bool {
	if l.Start.IsZero() || l.Start.After(t) {
		return false
	}
	if l.Live {
		return true
	}
	return !l.End.IsZero() && l.End.After(t)
}

// lockAt finds the lock generation of it live at t not yet joined to a claim (-1: none).
func (e *Evidence) lockAt(it Item, t time.Time, used map[int]bool) int {
	for i, l := range e.Locks {
		if !used[i] && l.Item.Same(it) && lockLive(l, t) {
			return i
		}
	}
	return -1
}

func collisions(cs []Claim) []Collision {
	out := []Collision{}
	for i := 0; i < len(cs); {
		j := i + 1
		for j < len(cs) && cs[j].Item.Same(cs[i].Item) {
			j++
		}
		var ss []string
		for _, c := range cs[i:j] {
			if !slices.Contains(ss, c.Session) {
				ss = append(ss, c.Session)
			}
		}
		if len(ss) > 1 {
			out = append(out, Collision{Item: cs[i].Item, Sessions: ss})
		}
		i = j
	}
	return out
}

// refusals returns the refused claims in [from, to]: the events' claim.refused and the
// audit log's refused worker.claim attempts, one per attempt where both record it.
func (e *Evidence) refusals(from, to time.Time) []Entry {
	var out []Entry
	seen := map[string]bool{}
	in := func(en Entry) bool { return !en.At.IsZero() && !en.At.Before(from) && !en.At.After(to) }
	// The events first: they name the holder. An audit refusal adds only what no event
	// recorded (a seed DB writes no claim.refused; a lock-file refusal writes no event).
	for _, en := range e.Entries {
		if en.Kind == KindRefused && in(en) {
			if en.Attempt != "" {
				seen[en.Attempt] = true
			}
			out = append(out, en)
		}
	}
	for _, en := range e.Entries {
		if en.Source == SourceAudit && en.Kind == KindAttempt && en.Result == "refused" &&
			en.Code == "claimed_by_other_session" && in(en) && !seen[en.Attempt] {
			out = append(out, en)
		}
	}
	slices.SortStableFunc(out, compareEntries)
	return out
}

func (e *Evidence) contention(from, to time.Time) []Contention {
	by := map[Item]*Contention{}
	var order []Item
	for _, en := range e.refusals(from, to) {
		k := en.Item.Key()
		c := by[k]
		if c == nil {
			c = &Contention{Item: en.Item, Sessions: []string{}, Holders: []string{}}
			by[k] = c
			order = append(order, k)
		}
		c.Refusals++
		if en.Session != "" && !slices.Contains(c.Sessions, en.Session) {
			c.Sessions = append(c.Sessions, en.Session)
		}
		if en.Holder != "" && !slices.Contains(c.Holders, en.Holder) {
			c.Holders = append(c.Holders, en.Holder)
		}
	}
	out := make([]Contention, 0, len(order))
	for _, k := range order {
		out = append(out, *by[k])
	}
	slices.SortStableFunc(out, func(a, b Contention) int { return cmp.Compare(b.Refusals, a.Refusals) })
	return out
}

// compareItems orders items by org, repo (folded) and number.
func compareItems(a, b Item) int {
	x, y := a.Key(), b.Key()
	return cmp.Or(cmp.Compare(x.Org, y.Org), cmp.Compare(x.Repo, y.Repo), cmp.Compare(x.Number, y.Number))
}
