package tui

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	"charm.land/lipgloss/v2"

	"steward/govern"
)

// columns of each list page.
func pageColumns(id pageID) []column {
	ago := func(f func(*row) time.Time) func(a, b *row) int {
		return func(a, b *row) int { return -cmpTime(f(a), f(b)) } // older first = larger age first
	}
	text := func(i int) func(a, b *row) int {
		return func(a, b *row) int { return strings.Compare(a.Cells[i], b.Cells[i]) }
	}
	hb := func(r *row) time.Time { return r.Heartbeat }
	sinceT := func(r *row) time.Time { return r.Since }
	left := func(a, b *row) int { return cmpTime(a.Deadline, b.Deadline) }
	cnt := func(a, b *row) int { return cmp.Compare(a.Count, b.Count) }
	switch id {
	case pageOverview:
		return []column{{Title: "Attention", Width: 14, Cell: stateCell(0)}, {Title: "Area", Width: 13, Idx: 1},
			{Title: "Item", Width: 12, Flex: 1, Idx: 2, Sort: text(2)}, {Title: "What", Width: 20, Flex: 3, Idx: 3}}
	case pageClaims:
		return []column{
			{Title: "Item", Width: 12, Flex: 2, Sort: text(0)}, {Title: "Role", Width: 8, Flex: 1, Idx: 1, Drop: 4},
			{Title: "Claimant", Width: 8, Flex: 1, Idx: 2, Drop: 3}, {Title: "Session", Width: 7, Flex: 1, Idx: 3, Drop: 2},
			{Title: "Phase", Width: 6, Idx: 4, Drop: 5}, {Title: "Heartbeat", Width: 9, Idx: 5, Cell: cellAgo(hb), Sort: ago(hb)},
			{Title: "Left", Width: 13, Idx: 6, Cell: cellLeft, Sort: left},
			{Title: "Contract", Width: 8, Idx: 7, Cell: stateCell(7)}, {Title: "Fresh", Width: 7, Flex: 1, Idx: 8, Cell: stateCell(8)},
			{Title: "Owner", Width: 7, Idx: 9, Cell: stateCell(9)},
		}
	case pageContention:
		return []column{{Title: "Kind", Width: 14, Flex: 1, Sort: text(0)}, {Title: "Class", Width: 9, Idx: 1, Cell: stateCell(1)},
			{Title: "Item", Width: 12, Flex: 1, Idx: 2, Sort: text(2)}, {Title: "Count", Width: 5, Idx: 3, Sort: cnt},
			{Title: "Sessions", Width: 10, Flex: 2, Idx: 4}, {Title: "Window", Width: 6, Idx: 5}}
	case pageClarifications:
		return []column{{Title: "Item", Width: 12, Flex: 1, Sort: text(0)}, {Title: "Title", Width: 14, Flex: 3, Idx: 1},
			{Title: "Asked by", Width: 8, Flex: 1, Idx: 2}, {Title: "Age", Width: 9, Flex: 1, Idx: 3, Cell: cellSLA, Sort: ago(sinceT)}}
	case pageOrphans:
		return []column{{Title: "Kind", Width: 16, Flex: 1, Sort: text(0)}, {Title: "Item", Width: 10, Flex: 1, Idx: 1, Sort: text(1)},
			{Title: "Evidence", Width: 14, Flex: 4, Idx: 2}, {Title: "Action", Width: 12, Flex: 2, Idx: 3}}
	case pageActivity:
		return []column{{Title: "Age", Width: 6, Cell: cellAgo(sinceT), Sort: ago(sinceT)}, {Title: "Source", Width: 7, Idx: 1},
			{Title: "Kind", Width: 10, Flex: 1, Idx: 2, Sort: text(2)}, {Title: "Item", Width: 10, Flex: 1, Idx: 3, Sort: text(3)},
			{Title: "Session", Width: 7, Flex: 1, Idx: 4, Drop: 2}, {Title: "Actor", Width: 6, Flex: 1, Idx: 5, Drop: 1},
			{Title: "Result", Width: 9, Idx: 6, Cell: stateCell(6)}, {Title: "Message", Width: 10, Flex: 3, Idx: 7}}
	case pageSessions:
		return []column{{Title: "Session", Width: 10, Flex: 2, Sort: text(0)}, {Title: "Role", Width: 6, Flex: 1, Idx: 1},
			{Title: "Profile", Width: 7, Flex: 1, Idx: 2, Drop: 1}, {Title: "PID", Width: 6, Idx: 3}, {Title: "Alive", Width: 7, Idx: 4, Cell: stateCell(4)},
			{Title: "Heartbeat", Width: 9, Idx: 5, Cell: cellAgo(hb), Sort: ago(hb)}, {Title: "Leases", Width: 6, Idx: 6, Sort: cnt},
			{Title: "Status", Width: 7, Flex: 1, Idx: 7}}
	}
	return nil
}

// activityRows turns the merged timeline into rows; undoable audit attempts carry undo, and
// attempts whose outcome is unknown carry Verify and Resolve by hand.
func activityRows(d *data, knows func(string) bool) []row {
	tl := d.timeline()
	rows := make([]row, 0, len(tl))
	for i := range tl {
		e := &tl[i]
		key := "event:" + e.Source + "\x00" + e.Attempt + "\x00" + e.Kind + "\x00" + e.At.String()
		if e.Source == "steward" && e.Attempt != "" {
			// One row per attempt, whatever record of it is drawn: the selection stays on it
			// when a verify writes its missing outcome.
			key = "event:steward\x00" + e.Attempt
		}
		r := row{
			Key:   key,
			Cells: []string{"", e.Source, e.Kind, e.Item, e.Session, e.Actor, e.Result, e.Message},
			Since: e.At, Item: e.Item, Title: e.Source + " " + e.Kind + " " + e.Item, CopyID: firstNonEmpty(e.Attempt, e.Item),
			Sections: []section{{Title: "Event", Lines: []string{"at " + stamp(e.At), "source " + e.Source, "kind " + e.Kind,
				"session " + e.Session, "actor " + e.Actor, "result " + e.Result, "id " + e.Attempt, e.Message}}},
		}
		if e.Inverse != nil && e.Result == string(govern.ResultSucceeded) && (knows == nil || knows(govern.ActionUndo)) {
			r.Actions = []actionRef{{Req: govern.Request{Action: govern.ActionUndo, Target: govern.Target{Attempt: e.Attempt}}, Label: "undo " + e.Kind}}
		}
		if e.Unsettled != nil {
			r.setUnsettled(e.Unsettled)
		}
		r.Search = haystack(r.Cells...)
		rows = append(rows, r)
	}
	return rows
}

// Pseudo-actions of the action menu for an attempt whose outcome is unknown: they are not
// governed actions with a preview but the core's verifier and its human resolution.
const (
	localVerify  = "audit.verify"
	localResolve = "audit.resolve-by-hand"
)

// setUnsettled marks the row as an unknown attempt: Verify and Resolve by hand apply.
func (r *row) setUnsettled(a *attemptRef) {
	r.Unsettled = a
	r.Actions = append(r.Actions,
		actionRef{Req: govern.Request{Action: localVerify, Target: govern.Target{Attempt: a.ID}}, Label: "Verify the outcome from evidence (v)"},
		actionRef{Req: govern.Request{Action: localResolve, Target: govern.Target{Attempt: a.ID}}, Label: "Resolve by hand: succeeded or failed (R)"})
	r.Sections = append(r.Sections, section{Title: "Unknown outcome", Lines: []string{
		"it may have taken effect — verify before retrying",
		"v: the core's verifier reads the evidence back from the source and settles it, or says it cannot",
		"R: record your own judgement (succeeded or failed, with a reason) in the audit log",
	}})
}

// auditEvents turns steward's audit attempts into timeline events, newest first.
func auditEvents(atts []govern.Attempt) []event {
	out := make([]event, 0, len(atts))
	for _, a := range atts {
		rec := a.Intent
		if a.Outcome != nil {
			rec = a.Outcome
		}
		if rec == nil && len(a.Resolutions) > 0 {
			rec = &a.Resolutions[len(a.Resolutions)-1]
		}
		if rec == nil {
			continue
		}
		at, _ := time.Parse(time.RFC3339Nano, rec.At)
		e := event{At: at, Source: "steward", Kind: line(rec.Action), Actor: cut(actorName(rec.Actor)),
			Result: string(a.Status()), Attempt: cut(a.ID), Message: cut(rec.Code + " " + rec.Message)}
		if rec.Target.Item != nil {
			e.Item = cut(rec.Target.Item.String())
		}
		e.Session = cut(rec.Target.Session)
		if a.Outcome != nil {
			e.Inverse = a.Outcome.Inverse
		}
		switch {
		case len(a.Resolutions) > 0:
			res := a.Resolutions[len(a.Resolutions)-1]
			e.Message = cut("resolved by " + string(res.ResolvedBy) + " as " + string(res.Result) + ": " + res.Message)
			e.Inverse = res.Inverse
		case a.Outcome == nil:
			e.Message = "no outcome recorded: interrupted, or still in flight"
		}
		if a.Unresolved() {
			e.Unsettled = &attemptRef{ID: e.Attempt, Action: e.Kind, Target: cut(targetString(rec.Target)), Actor: e.Actor, Message: e.Message, At: at}
		}
		out = append(out, e)
	}
	return out
}

func actorName(a govern.Actor) string {
	if a.GiteaLogin != "" {
		return a.GiteaLogin
	}
	return a.OSUser
}

// inbox orders what needs a person: human-required first, then operator; routine is kept
// (the overview says how many are hidden) but not shown.
func inbox(d *data) []row {
	var human, oper, routine []row
	add := func(class, area, item, what string, key string, att ...*attemptRef) {
		r := row{Key: "inbox:" + key, Cells: []string{class, area, item, what}, Class: class, Item: item, Title: what, CopyID: item}
		if len(att) > 0 && att[0] != nil {
			r.setUnsettled(att[0])
		}
		r.Search = haystack(r.Cells...)
		switch class {
		case "human-required":
			human = append(human, r)
		case "operator":
			oper = append(oper, r)
		default:
			routine = append(routine, r)
		}
	}
	for _, h := range d.Sources {
		if h.State == "unavailable" {
			add("human-required", "source", h.Name, h.Name+" unavailable"+reason(h.Reason), "src:"+h.Name)
		}
	}
	for _, e := range d.Audit {
		if e.Result == string(govern.ResultUnknown) {
			add("human-required", "audit", e.Item, "unknown outcome of "+e.Kind+" — verify before retrying (attempt "+e.Attempt+")", "audit:"+e.Attempt, e.Unsettled)
		}
	}
	for _, r := range d.Rows[pageContention] {
		class := "human-required"
		if r.Class == "routine" {
			class = "routine"
		}
		add(class, "contention", r.Item, r.Cells[0]+" · "+r.Cells[4], r.Key)
	}
	for _, r := range d.Rows[pageClarifications] {
		add("human-required", "clarification", r.Item, "asks: "+r.Cells[1], r.Key)
	}
	for _, r := range d.Rows[pageOrphans] {
		class := "operator"
		if len(r.Actions) == 0 {
			class = "routine"
		}
		add(class, "orphan", r.Item, r.Cells[0]+" → "+r.Cells[3], r.Key)
	}
	d.routine = len(routine)
	return append(human, oper...)
}

// overviewHead draws the counts, the buckets and the sources' health above the inbox.
func overviewHead(p *listPage) string {
	d := p.env.data
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
	lines := []string{truncate(strings.Join(cs, " · "), p.width), st.dim.Render(truncate("buckets: "+strings.Join(bs, " · "), p.width))}
	for _, h := range d.Sources {
		s := fmt.Sprintf("%-6s %s", h.Name, stateStyle(h.State).Render(strings.ReplaceAll(h.State, "_", " ")))
		if !h.ScannedAt.IsZero() {
			s += fmt.Sprintf("  scanned %s ago in %s", since(h.ScannedAt, p.env.now), h.Scan.Round(time.Millisecond))
		} else {
			s += "  not scanned"
		}
		s += reason(h.Reason)
		lines = append(lines, truncate(s, p.width))
	}
	lines = append(lines, st.bold.Render(fmt.Sprintf("Attention inbox — %d routine hidden", d.routine)))
	return strings.Join(lines, "\n")
}

var _ = lipgloss.NewStyle
