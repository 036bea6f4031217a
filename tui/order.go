package tui

import (
	"cmp"
	"slices"
	"time"

	"steward/govern"
	"steward/govern/actionid"
	"steward/model"
)

// Every list is ordered by what needs attention first: the rows'
// Rank (dead and expired first), then Urgent (the earliest deadline, the oldest question or
// heartbeat). A sort chosen with s replaces the order; s back to the start restores it.

// byAttention orders rows by Rank, then Urgent (zero last), keeping the snapshot's order
// among equals.
func byAttention(rows []*row) {
	slices.SortStableFunc(rows, func(a, b *row) int {
		if c := cmp.Compare(a.Rank, b.Rank); c != 0 {
			return c
		}
		return cmpTime(a.Urgent, b.Urgent)
	})
}

// claimRank: a claim whose lease expired or whose owner is dead first, then other stale or
// incomplete ones, then live ones.
func claimRank(c *model.Claim) int {
	switch {
	case c.Freshness == "expired" || c.Freshness == "stale_dead_process" || c.OwnerLiveness == model.LivenessDead:
		return 0
	case c.Freshness != "active" || c.Contract == "incomplete" || c.Contract == "absent":
		return 1
	}
	return 2
}

// orphanRank: unreadable and incomplete lock files first (they block recovery and need a
// person: never routine), then orphans with a sanctioned action, then inspect-only ones.
func orphanRank(o *model.Orphan) int {
	switch {
	case neverRoutine(o.Kind):
		return 0
	case o.Action != nil:
		return 1
	}
	return 2
}

// neverRoutine reports the orphan kinds that need a person even without a sanctioned
// action: a lock file steward cannot read or that lacks required fields.
func neverRoutine(k model.OrphanKind) bool {
	return k == model.OrphanUnreadableLock || k == model.OrphanIncompleteLock
}

// livenessRank: dead sessions first, then unknown, then alive.
func livenessRank(live string) int {
	switch live {
	case "dead":
		return 0
	case "unknown":
		return 1
	}
	return 2
}

// firstSeen is the oldest time of the evidence (zero when none has one).
func firstSeen(ev []model.Evidence) time.Time {
	var t time.Time
	for _, e := range ev {
		if !e.At.IsZero() && (t.IsZero() || e.At.Before(t)) {
			t = e.At
		}
	}
	return t
}

// copyOf is what y copies from a row with a lease, a lock file or an item, and its name.
func copyOf(lease, lock, item string) (string, string) {
	switch {
	case lease != "":
		return cut(lease), "lease id"
	case lock != "":
		return cut(lock), "lock file name"
	case item != "":
		return item, "item"
	}
	return "", ""
}

// recoverable returns the item when actions hold a sanctioned lease or lock recovery and
// the core knows the recover plan; nil otherwise.
func recoverable(it *govern.Item, actions []actionRef, cfg digestCfg) *govern.Item {
	if it == nil || cfg.knows != nil && !cfg.knows(actionid.Recover) {
		return nil
	}
	for _, a := range actions {
		switch a.Req.Action {
		case actionid.ReclaimExpired, actionid.AbandonStale, actionid.RetireLock:
			return it
		}
	}
	return nil
}
