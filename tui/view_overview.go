package tui

import (
	"fmt"
	"strings"
	"time"

	"steward/model"
)

// overviewView is the Overview: the counts, the buckets and the sources' health above the
// attention inbox — what needs a person, human-required first; routine rows hidden unless
// h shows them. Each inbox row is its origin's row (the same actions and detail), and >
// goes to it.
type overviewView struct {
	*listView
	// routine shows the inbox's routine rows.
	routine bool
}

func newOverview(env *shared) tab {
	v := &overviewView{listView: newList(pageOverview, env, overviewColumns())}
	v.head = v.headView
	v.empty = v.nothing
	return v
}

func overviewColumns() []column {
	return []column{
		{Title: "Attention", Fixed: 14, Min: 14, Cell: stateCell(0)},
		{Title: "Area", Idx: 1, Prio: 3, Min: 5, Max: 13},
		{Title: "Item", Idx: 2, Elide: true, Min: 8, Max: 40, Sort: sortText(2)},
		{Title: "Age", Idx: 4, Prio: 3, Fixed: 7, Min: 6, Cell: cellAge, Sort: sortAge(rowSince)},
		{Title: "SLA", Idx: 5, Prio: 2, Fixed: 12, Min: 6, Cell: cellOverSLA, Sort: sortTime(rowUrgent)},
		{Title: "What", Idx: 3, Grow: true, Decides: true, Tail: " → ", Min: 32},
	}
}

func (v *overviewView) setData(d *data) { v.setRows(d.inboxRows(v.routine), rowsHint{}) }

// bindings add h (show or hide the routine rows) to the list's.
func (v *overviewView) bindings() bindings {
	bs := v.listView.bindings()
	if v.filtering {
		return bs
	}
	return append(bs, bind(v.env.keys.Table.Routine, "Rows", false, nil, func() intent {
		v.routine = !v.routine
		v.setData(v.env.data)
		if v.routine {
			return noteIntent{"routine rows shown in the inbox (h hides them)"}
		}
		return noteIntent{"routine rows hidden from the inbox (h shows them)"}
	}))
}

// nothing is the body when the inbox is empty but for routine rows.
func (v *overviewView) nothing() string {
	if n := v.env.data.routine; n > 0 {
		return fmt.Sprintf("nothing needs attention (%d routine hidden; h shows them)", n)
	}
	return "none"
}

// headView draws the counts, the buckets and the sources' health above the inbox.
func (v *overviewView) headView() string {
	d := v.env.data
	if !d.Loaded {
		return st.warn.Render("waiting for the first snapshot…")
	}
	var cs []string
	for _, c := range d.Counts {
		s := fmt.Sprintf("%s %s", st.bold.Render(fmt.Sprint(c.N)), c.Label)
		if d.down(c.Page) {
			cs = append(cs, st.bad.Render(c.Label+" unavailable"))
			continue
		}
		if d.partial(c.Page) {
			s += " (partial)"
		}
		if c.Note != "" {
			s += " (" + c.Note + ")"
		}
		cs = append(cs, s)
	}
	var bs []string
	for _, b := range d.Buckets {
		bs = append(bs, fmt.Sprintf("%s %d", b.Label, b.N))
	}
	lines := strings.Split(wrapText(strings.Join(cs, " · "), v.width), "\n")
	for _, l := range strings.Split(wrapText("buckets: "+strings.Join(bs, " · "), v.width), "\n") {
		lines = append(lines, st.dim.Render(l))
	}
	for _, h := range d.Sources {
		s := fmt.Sprintf("%-6s %s", h.Name, stateStyle(h.State).Render(strings.ReplaceAll(h.State, "_", " ")))
		if !h.ScannedAt.IsZero() {
			s += fmt.Sprintf("  scanned %s ago in %s", since(h.ScannedAt, v.env.now), h.Scan.Round(time.Millisecond))
		} else {
			s += "  not scanned"
		}
		s += reason(h.Reason)
		lines = append(lines, truncate(s, v.width))
	}
	for _, h := range d.Sources {
		for _, n := range h.Notes {
			lines = append(lines, st.dim.Render(truncate("       "+h.Name+" note: "+n, v.width)))
		}
	}
	routine := fmt.Sprintf("%d routine hidden (h shows them)", d.routine)
	if v.routine {
		routine = fmt.Sprintf("%d routine shown (h hides them)", d.routine)
	}
	lines = append(lines, st.bold.Render("Attention inbox")+" — "+routine)
	return strings.Join(lines, "\n")
}

// inbox orders what needs a person: human-required first, then operator, each oldest first;
// routine rows are kept apart (the overview says how many, h shows them). Each row is its
// origin's row — the same actions, detail and keys — with the origin's view and key, so
// that a offers exactly what the row's own view offers and > goes there. An unreadable or
// incomplete lock file is never routine.
func inbox(d *data) []*row {
	var rows, routine []*row
	add := func(class, area, what string, origin *row, page pageID) {
		r := row{Class: class}
		if origin != nil {
			r = *origin
			r.Class = class
			r.Origin.page, r.Origin.key = page, origin.Key
		}
		r.Key, r.ID = "inbox:"+r.Key, "inbox:"+r.ID
		// The inbox's age is the row's urgency time (a question's, an orphan's), else its own
		// time (an unknown outcome's attempt), which is then its urgency too: it is due since.
		if r.Urgent.IsZero() {
			r.Urgent = r.Since
		} else {
			r.Since = r.Urgent
		}
		r.Rank = map[string]int{"human-required": 0, "operator": 1}[class]
		if class == "routine" {
			r.Rank = 2
		}
		r.Cells = []string{class, area, r.Item, what, "", ""}
		r.Title = firstNonEmpty(r.Title, what)
		r.finish()
		if class == "routine" {
			routine = append(routine, &r)
		} else {
			rows = append(rows, &r)
		}
	}
	for _, h := range d.Sources {
		if h.State == "unavailable" {
			src := row{
				Key:      "src:" + h.Name,
				Item:     h.Name,
				Title:    h.Name + " unavailable",
				Sections: []section{{Title: "Source", Lines: []string{h.Name + " " + h.State + reason(h.Reason)}}},
			}
			add("human-required", "source", h.Name+" unavailable"+reason(h.Reason), &src, pageOverview)
		}
	}
	acts, _ := activityRows(&data{merged: d.Audit}, nil, true)
	for i := range acts {
		a := acts[i]
		if a.Unsettled != nil {
			add(
				"human-required",
				"audit",
				"unknown outcome of "+a.Cells[2]+" — verify before retrying (attempt "+a.Unsettled.ID+")",
				a,
				pageActivity,
			)
		}
	}
	for i := range d.Rows[pageContention] {
		r := d.Rows[pageContention][i]
		class := "human-required"
		if r.Class == "routine" {
			class = "routine"
		}
		what := r.Cells[0] + " · " + r.Cells[4]
		if r.Next != "" {
			what = collisionWords(r) + " → " + r.Next
		}
		add(class, "contention", what, r, pageContention)
	}
	for i := range d.Rows[pageClarifications] {
		r := d.Rows[pageClarifications][i]
		add("human-required", "clarification", "asks: "+r.Cells[1], r, pageClarifications)
	}
	partOf := map[string]int{}
	for i, g := range d.incidents {
		for _, k := range g.parts {
			partOf[k] = i
		}
	}
	parts := make([][]*row, len(d.incidents))
	for i := range d.Rows[pageOrphans] {
		r := d.Rows[pageOrphans][i]
		if g, ok := partOf[r.Key]; ok {
			parts[g] = append(parts[g], r)
			continue
		}
		class := "operator"
		if len(r.Actions) == 0 && r.Rank != 0 {
			class = "routine"
		}
		add(class, "orphan", r.Cells[0]+" → "+r.Cells[3], r, pageOrphans)
	}
	// A dead worker is one row, whatever number of orphans it left; > goes to its first.
	for i, g := range d.incidents {
		if len(parts[i]) == 0 {
			continue
		}
		r, what, itemCell := g.row(parts[i])
		add("operator", "worker", what, &r, pageOrphans)
		x := rows[len(rows)-1]
		x.Origin.key = parts[i][0].Key
		x.Cells[2] = itemCell
		x.finish()
	}
	byAttention(rows)
	for i := range rows {
		if rows[i].Origin.page == pageOverview {
			rows[i].Origin.key = "" // a source row has no other view
		}
	}
	d.routine, d.Routine = len(routine), routine
	return rows
}

// collisionWords says a contention row in plain words for the inbox (the kind's name stays
// in the detail and the JSON).
func collisionWords(r *row) string {
	switch r.Cells[0] {
	case string(model.ContentionDuplicateLiveLock):
		return "two live locks on one item (" + r.Cells[4] + ")"
	case string(model.ContentionConcurrentActiveLease):
		return "two active leases on one item (" + r.Cells[4] + ")"
	case string(model.ContentionLockLeaseMismatch):
		return "lock and lease disagree (" + r.Cells[4] + ")"
	case string(model.ContentionClaimRefused):
		return "claims refused (" + r.Cells[4] + ")"
	}
	return r.Cells[0] + " (" + r.Cells[4] + ")"
}
