package sim

import (
	"math/rand/v2"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Candidate is what a worker knows about one backlog item when it chooses.
type Candidate struct {
	Number int64
	Title  string
	Body   string
	Labels []string
	Open   bool
	// Claimed is true when a lock file or an active lease exists for the item.
	Claimed bool
	// HeldBy is the session of the active lease on the item, when there is one.
	HeldBy string
}

// Priority labels and their weights; an item without one weighs as medium-low.
var priorityWeight = map[string]int{
	"priority:critical": 40,
	"priority:high":     30,
	"priority:medium":   20,
	"priority:low":      10,
}

const noPriorityWeight = 15

var dependsRe = regexp.MustCompile(`(?i)depends\s+on\s+#(\d+)`)

// Dependencies returns the item numbers a body names as "depends on #N", in order, once each.
func Dependencies(body string) []int64 {
	var out []int64
	seen := map[int64]bool{}
	for _, m := range dependsRe.FindAllStringSubmatch(body, -1) {
		n, err := strconv.ParseInt(m[1], 10, 64)
		if err == nil && n > 0 && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

// Rules say which labels exclude an item from the pool.
type Rules struct {
	Markers []string // clarification marker labels
	Blocked string   // the blocked label
}

func (r Rules) excluded(labels []string) (bool, string) {
	for _, l := range labels {
		if l == r.Blocked {
			return true, "blocked"
		}
		for _, m := range r.Markers {
			if l == m {
				return true, "awaiting clarification"
			}
		}
	}
	return false, ""
}

// Eligible reports whether a worker may go for c, and why not. open says whether an item
// number is open (a dependency not in the map counts as open: unproven is not done).
func Eligible(c Candidate, rules Rules, open map[int64]bool) (bool, string) {
	switch {
	case !c.Open:
		return false, "closed"
	case c.Claimed:
		return false, "claimed"
	}
	if ex, why := rules.excluded(c.Labels); ex {
		return false, why
	}
	for _, d := range Dependencies(c.Body) {
		if o, known := open[d]; o || !known {
			return false, "depends on open #" + strconv.FormatInt(d, 10)
		}
	}
	return true, ""
}

// Value is how much a worker wants c: its priority plus what closing it would unblock.
func Value(c Candidate, dependents map[int64]int) int {
	w := 0
	for _, l := range c.Labels {
		if v, ok := priorityWeight[strings.ToLower(l)]; ok && v > w {
			w = v
		}
	}
	if w == 0 {
		w = noPriorityWeight
	}
	return w + 5*dependents[c.Number]
}

// Choose returns the most valuable eligible candidate (ok false when none is). A little
// per-worker jitter from rng spreads workers over items of equal value; ties go to the
// lower number. It is a pure function of its inputs.
func Choose(cs []Candidate, rules Rules, rng *rand.Rand) (Candidate, bool) {
	open, deps := index(cs)
	type scored struct {
		c Candidate
		v int
	}
	var el []scored
	for _, c := range cs {
		if ok, _ := Eligible(c, rules, open); ok {
			el = append(el, scored{c, Value(c, deps)*4 + rng.IntN(12)})
		}
	}
	if len(el) == 0 {
		return Candidate{}, false
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
func Hot(cs []Candidate, session string) (Candidate, bool) {
	_, deps := index(cs)
	var best Candidate
	bv, found := -1, false
	for _, c := range cs {
		if !c.Open || c.HeldBy == "" || c.HeldBy == session {
			continue
		}
		if v := Value(c, deps); v > bv || v == bv && c.Number < best.Number {
			best, bv, found = c, v, true
		}
	}
	return best, found
}

func index(cs []Candidate) (open map[int64]bool, dependents map[int64]int) {
	open = make(map[int64]bool, len(cs))
	dependents = map[int64]int{}
	for _, c := range cs {
		open[c.Number] = c.Open
	}
	for _, c := range cs {
		if !c.Open {
			continue
		}
		for _, d := range Dependencies(c.Body) {
			dependents[d]++
		}
	}
	return open, dependents
}
