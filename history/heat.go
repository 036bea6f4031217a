package history

import (
	"cmp"
	"slices"
	"time"
)

// Cell is what one session did on one item in a heatmap's window.
type Cell struct {
	Claims     int `json:"claims"`
	Refusals   int `json:"refusals"`
	Collisions int `json:"collisions"`
}

// Heat is the contention of a window: one cell per session × item. Items run hottest first
// (collisions, then refusals, then claims), sessions most refused first.
type Heat struct {
	From     time.Time `json:"from"`
	To       time.Time `json:"to"`
	Sessions []string  `json:"sessions"`
	Items    []Item    `json:"items"`
	// Cells[s][i] is session s on item i.
	Cells [][]Cell `json:"cells"`
	// Max is the largest cell total (claims + refusals + collisions), for shading.
	Max  int   `json:"max"`
	Gaps []Gap `json:"gaps"`
}

// Total is a cell's count of everything.
func (c Cell) Total() int { return c.Claims + c.Refusals + c.Collisions }

// Heat counts, per session and item in [from, to], the claims taken (a lease begun), the
// claims refused, and the collisions (a claim whose lease overlapped another session's on
// the same item).
func (e *Evidence) Heat(from, to time.Time) Heat {
	e.Finish()
	type key struct {
		s string
		i Item
	}
	cells := map[key]*Cell{}
	items := map[Item]Item{}
	cell := func(s string, it Item) *Cell {
		if s == "" {
			s = "(session unknown)"
		}
		k := key{s, it.Key()}
		if _, ok := items[k.i]; !ok {
			items[k.i] = it
		}
		c := cells[k]
		if c == nil {
			c = &Cell{}
			cells[k] = c
		}
		return c
	}
	inWin := func(t time.Time) bool { return !t.IsZero() && !t.Before(from) && !t.After(to) }
	byItem := map[Item][]int{}
	for i, sp := range e.Leases {
		if inWin(sp.Start) {
			cell(sp.Session, sp.Item).Claims++
		}
		byItem[sp.Item.Key()] = append(byItem[sp.Item.Key()], i)
	}
	collided := map[int]bool{}
	for _, idx := range byItem {
		slices.SortFunc(idx, func(a, b int) int { return e.Leases[a].Start.Compare(e.Leases[b].Start) })
		for n, a := range idx {
			x := e.Leases[a]
			xe := spanEnd(x, to)
			for _, b := range idx[n+1:] {
				y := e.Leases[b]
				if xe.IsZero() || !y.Start.Before(xe) {
					break
				}
				if x.Session != y.Session && overlap(x, y, from, to) {
					collided[a], collided[b] = true, true
				}
			}
		}
	}
	for a := range collided {
		cell(e.Leases[a].Session, e.Leases[a].Item).Collisions++
	}
	for _, en := range e.refusals(from, to) {
		cell(en.Session, en.Item).Refusals++
	}
	h := Heat{From: from, To: to, Sessions: []string{}, Items: []Item{}, Cells: [][]Cell{}}
	type tot struct{ coll, ref, claims int }
	itot, stot := map[Item]*tot{}, map[string]*tot{}
	for k, c := range cells {
		if itot[k.i] == nil {
			itot[k.i] = &tot{}
			h.Items = append(h.Items, items[k.i])
		}
		if stot[k.s] == nil {
			stot[k.s] = &tot{}
			h.Sessions = append(h.Sessions, k.s)
		}
		for _, t := range []*tot{itot[k.i], stot[k.s]} {
			t.coll += c.Collisions
			t.ref += c.Refusals
			t.claims += c.Claims
		}
		h.Max = max(h.Max, c.Total())
	}
	slices.SortFunc(h.Items, func(a, b Item) int {
		x, y := itot[a.Key()], itot[b.Key()]
		return cmp.Or(cmp.Compare(y.coll, x.coll), cmp.Compare(y.ref, x.ref), cmp.Compare(y.claims, x.claims),
			compareItems(a, b))
	})
	slices.SortFunc(h.Sessions, func(a, b string) int {
		x, y := stot[a], stot[b]
		return cmp.Or(
			cmp.Compare(y.ref, x.ref),
			cmp.Compare(y.coll, x.coll),
			cmp.Compare(y.claims, x.claims),
			cmp.Compare(a, b),
		)
	})
	for _, s := range h.Sessions {
		row := make([]Cell, len(h.Items))
		for j, it := range h.Items {
			if c := cells[key{s, it.Key()}]; c != nil {
				row[j] = *c
			}
		}
		h.Cells = append(h.Cells, row)
	}
	h.Gaps = e.gapsFor(Item{}, true, from, to)
	return h
}

// CellFilter is the timeline filter of one cell: its session, its item, the window.
func (h Heat) CellFilter(s, i int) Filter {
	f := Filter{Since: h.From, Until: h.To}
	if s >= 0 && s < len(h.Sessions) {
		f.Session = h.Sessions[s]
	}
	if i >= 0 && i < len(h.Items) {
		f.Item = h.Items[i]
	}
	return f
}

// overlap reports whether two leases were live at one instant inside [from, to].
func overlap(x, y LeaseSpan, from, to time.Time) bool {
	if x.Start.IsZero() || y.Start.IsZero() {
		return false
	}
	xe, ye := spanEnd(x, to), spanEnd(y, to)
	if xe.IsZero() || ye.IsZero() {
		return false
	}
	lo := maxTime(x.Start, y.Start, from)
	hi := minTime(xe, ye, to)
	return lo.Before(hi)
}

func maxTime(ts ...time.Time) time.Time {
	m := ts[0]
	for _, t := range ts[1:] {
		if t.After(m) {
			m = t
		}
	}
	return m
}

func minTime(ts ...time.Time) time.Time {
	m := ts[0]
	for _, t := range ts[1:] {
		if t.Before(m) {
			m = t
		}
	}
	return m
}

// spanEnd is when a lease stopped being live, to for one still live, zero when it ended at
// an unrecorded time (no collision is claimed on it).
func spanEnd(s LeaseSpan, to time.Time) time.Time {
	if s.Ended {
		return s.End
	}
	return to
}
