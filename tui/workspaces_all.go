package tui

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// The all view of a workbench over several workspaces: a Root with no core whose data is
// every workspace's rows, inbox, counts and timeline under a Workspace column (mergeAll),
// rebuilt from the workspaces' own Roots (multi.rebuild).

// wsCell is the cell of a row of the all view that names its workspace (past every view's
// own cells).
const wsCell = 16

// wsColumn is the all view's Workspace column, an identity column like the item's.
func wsColumn() column {
	return column{Title: "Workspace", Idx: wsCell, Elide: true, Min: 5, Max: 16,
		Sort: func(a, b *row) int { return strings.Compare(a.cell(wsCell), b.cell(wsCell)) }}
}

// withWorkspace is a view's columns in the all view: the Workspace column first, then the
// view's own, each still drawing its own cell.
func withWorkspace(cols []column) []column {
	out := make([]column, 0, len(cols)+1)
	out = append(out, wsColumn())
	for i, c := range cols {
		if c.Idx == 0 && i > 0 {
			c.Idx = i
		}
		c.placed = true
		out = append(out, c)
	}
	return out
}

// inWorkspace returns r as a row of the all view: under workspace ws (its index i), its key
// and identity its workspace's and its own, with no action, recovery or attempt to settle —
// Origin says where Jump shows it in its workspace.
func inWorkspace(r row, i int, ws string, page pageID) row {
	if r.Origin.key == "" {
		r.Origin.page, r.Origin.key = page, r.Key
	}
	r.Workspace = i + 1
	r.Key, r.ID = ws+"\x1f"+r.Key, ws+"\x1f"+r.ID
	cells := make([]string, wsCell+1)
	copy(cells, r.Cells)
	cells[wsCell] = line(ws)
	r.Cells = cells
	w := make([]int, wsCell+1)
	copy(w, r.w)
	w[wsCell] = ansi.StringWidth(cells[wsCell])
	r.w = w
	r.Search += " " + strings.ToLower(cells[wsCell])
	r.Actions, r.Recover, r.Unsettled, r.LockFile = nil, nil, nil, ""
	r.Inspect = "the all view only shows; > opens this row in workspace " + line(
		ws,
	) + ", where its actions go to that workspace's core"
	return r
}

// mergeAll is the all view's data: every workspace's rows, inbox, counts and timeline under
// its name. A source is usable when it is in some workspace; its state is the worst of them,
// its reason each workspace's that is not ok. The snapshot's time is the oldest workspace's.
func mergeAll(names []string, ds []*data) *data {
	out := &data{Rows: map[pageID][]*row{}}
	counts, buckets, srcs := map[string]int{}, map[string]int{}, map[string]int{}
	var evTotal, auTotal int
	for i, d := range ds {
		if d == nil || !d.Loaded {
			continue
		}
		ws := names[i]
		if !out.Loaded || d.Generated.Before(out.Generated) {
			out.Generated = d.Generated
		}
		out.Loaded = true
		for id, rows := range d.Rows {
			for _, r := range rows {
				out.Rows[id] = append(out.Rows[id], ptrTo(inWorkspace(*r, i, ws, id)))
			}
		}
		for _, r := range d.Inbox {
			out.Inbox = append(out.Inbox, ptrTo(inWorkspace(*r, i, ws, pageOverview)))
		}
		for _, r := range d.Routine {
			out.Routine = append(out.Routine, ptrTo(inWorkspace(*r, i, ws, pageOverview)))
		}
		out.routine += d.routine
		for _, e := range d.Events {
			out.Events = append(out.Events, eventIn(e, i, ws))
		}
		for _, e := range d.Audit {
			out.Audit = append(out.Audit, eventIn(e, i, ws))
		}
		evTotal += max(d.EventsTotal, len(d.Events))
		auTotal += max(d.AuditTotal, len(d.Audit))
		addCounts(&out.Counts, counts, d.Counts)
		addCounts(&out.Buckets, buckets, d.Buckets)
		for _, h := range d.Sources {
			mergeHealth(srcs, &out.Sources, h, ws)
		}
	}
	if evTotal > len(out.Events) {
		out.EventsTotal = evTotal
	}
	if auTotal > len(out.Audit) {
		out.AuditTotal = auTotal
	}
	for id := range out.Rows {
		byAttention(out.Rows[id])
	}
	byAttention(out.Inbox)
	out.merge()
	return out
}

// eventIn is e as the all view's timeline has it: under its workspace, nothing to undo or
// settle there.
func eventIn(e event, i int, ws string) event {
	e.Workspace, e.wsIndex, e.Inverse, e.Unsettled = line(ws), i+1, nil, nil
	return e
}

func addCounts(dst *[]count, by map[string]int, cs []count) {
	for _, c := range cs {
		if j, ok := by[c.Label]; ok {
			(*dst)[j].N += c.N
			continue
		}
		by[c.Label] = len(*dst)
		*dst = append(*dst, count{Label: c.Label, N: c.N, Page: c.Page})
	}
}

// mergeHealth folds workspace ws's health h into the all view's source of its name.
func mergeHealth(by map[string]int, dst *[]health, h health, ws string) {
	j, ok := by[h.Name]
	if !ok {
		j = len(*dst)
		by[h.Name] = j
		*dst = append(*dst, health{Name: h.Name, State: h.State, ScannedAt: h.ScannedAt})
	}
	have := &(*dst)[j]
	if ok {
		have.State = worseState(have.State, h.State)
		if h.ScannedAt.Before(have.ScannedAt) {
			have.ScannedAt = h.ScannedAt
		}
	}
	if h.State != "ok" && h.State != "not_configured" {
		why := line(ws) + ": " + strings.ReplaceAll(h.State, "_", " ")
		if h.Reason != "" {
			why += " (" + h.Reason + ")"
		}
		if have.Reason != "" {
			why = have.Reason + "; " + why
		}
		have.Reason = why
	}
	for _, n := range h.Notes {
		have.Notes = append(have.Notes, line(ws)+": "+n)
	}
}

// worseState is the state of a source made of two: usable (degraded) when one of them is.
func worseState(a, b string) string {
	usable := func(s string) bool { return s == "ok" || s == "degraded" }
	switch {
	case a == b:
		return a
	case a == "not_configured":
		return b
	case b == "not_configured":
		return a
	case usable(a) || usable(b):
		return "degraded" // some workspace reads it, not every one
	case a == "unavailable" || b == "unavailable":
		return "unavailable"
	}
	return a
}

// installAll gives the all view's Root its data (held while it is paused).
func installAll(r *Root, d *data) {
	if r.paused {
		r.held = d
		return
	}
	r.env.now = d.Clock.At(r.opts.Now())
	r.env.data = d
	r.raw.reset()
	r.setRows()
}
