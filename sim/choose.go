package sim

import (
	"math/rand/v2"
	"sort"

	"steward/alloc"
)

// candidate is what a worker knows about one backlog item when it chooses (alloc's).
type candidate = alloc.Candidate

// Rules say which labels exclude an item from the pool (alloc's).
type Rules = alloc.Rules

// choose returns the most valuable eligible candidate (ok false when none is). A little
// per-worker jitter from rng spreads workers over items of equal value; ties go to the
// lower number. It is a pure function of its inputs.
func choose(cs []candidate, rules Rules, rng *rand.Rand) (candidate, bool) {
	open, deps := alloc.Index(cs)
	type scored struct {
		c candidate
		v int
	}
	var el []scored
	for _, c := range cs {
		if ok, _ := alloc.Eligible(c, rules, open); ok {
			el = append(el, scored{c, alloc.Value(c, deps)*4 + rng.IntN(12)})
		}
	}
	if len(el) == 0 {
		return candidate{}, false
	}
	sort.SliceStable(el, func(i, j int) bool {
		if el[i].v != el[j].v {
			return el[i].v > el[j].v
		}
		return el[i].c.Number < el[j].c.Number
	})
	return el[0].c, true
}

// Hot returns the most valuable item another session holds with an active lease: the item
// a worker with a stale view would go for too (ok false when none is held by another).
func Hot(cs []candidate, session string) (candidate, bool) {
	_, deps := alloc.Index(cs)
	var best candidate
	bv, found := -1, false
	for _, c := range cs {
		if !c.Open || c.HeldBy == "" || c.HeldBy == session {
			continue
		}
		if v := alloc.Value(c, deps); v > bv || v == bv && c.Number < best.Number {
			best, bv, found = c, v, true
		}
	}
	return best, found
}
