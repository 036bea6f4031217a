package tui

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	"steward/govern"
)

// columns of each list page: identity columns (Prio 0) are sized first and never dropped,
// the others are dropped whole at narrow widths, least important (highest Prio) first, and
// prose (Grow) takes what is left (layout.go).
func pageColumns(id pageID) []column {
	ago := func(f func(*row) time.Time) func(a, b *row) int {
		return func(a, b *row) int { return -cmpTime(f(a), f(b)) } // older first = larger age first
	}
	text := func(i int) func(a, b *row) int {
		return func(a, b *row) int { return strings.Compare(a.cell(i), b.cell(i)) }
	}
	hb := func(r *row) time.Time { return r.Heartbeat }
	sinceT := func(r *row) time.Time { return r.Since }
	left := func(a, b *row) int { return cmpTime(a.Deadline, b.Deadline) }
	cnt := func(a, b *row) int { return cmp.Compare(a.Count, b.Count) }
	switch id {
	case pageOverview:
		return []column{{Title: "Attention", Fixed: 14, Min: 14, Cell: stateCell(0)}, {Title: "Area", Idx: 1, Prio: 3, Min: 5, Max: 13},
			{Title: "Item", Idx: 2, Elide: true, Min: 8, Max: 40, Sort: text(2)}, {Title: "Age", Idx: 4, Prio: 2, Fixed: 7, Min: 6, Cell: cellAge, Sort: ago(sinceT)},
			{Title: "SLA", Idx: 5, Prio: 2, Fixed: 12, Min: 6, Cell: cellOverSLA, Sort: func(a, b *row) int { return cmpTime(a.Urgent, b.Urgent) }},
			{Title: "What", Idx: 3, Grow: true, Min: 16}}
	case pageClaims:
		return []column{
			{Title: "Item", Elide: true, Min: 8, Max: 40, Sort: text(0)},
			{Title: "Claimant", Idx: 2, Elide: true, Min: 8, Max: 32},
			{Title: "Fresh", Idx: 8, Prio: 1, Min: 6, Max: 24, Cell: stateCell(8)},
			{Title: "Left", Idx: 6, Prio: 1, Fixed: 13, Min: 8, Cell: cellLeft, Sort: left},
			{Title: "Owner", Idx: 9, Prio: 2, Fixed: 7, Min: 5, Cell: stateCell(9)},
			{Title: "Heartbeat", Idx: 5, Prio: 3, Fixed: 7, Min: 6, Cell: cellAgo(hb), Sort: ago(hb)},
			{Title: "Session", Idx: 3, Prio: 4, Elide: true, Min: 8, Max: 32},
			{Title: "Phase", Idx: 4, Prio: 5, Min: 5, Max: 18},
			{Title: "Contract", Idx: 7, Prio: 6, Min: 6, Max: 12, Cell: stateCell(7)},
			{Title: "Role", Idx: 1, Prio: 7, Min: 4, Max: 28},
		}
	case pageContention:
		return []column{{Title: "Kind", Prio: 1, Min: 6, Max: 24, Sort: text(0)}, {Title: "Class", Idx: 1, Prio: 2, Fixed: 9, Min: 7, Cell: stateCell(1)},
			{Title: "Item", Idx: 2, Elide: true, Min: 8, Max: 40, Sort: text(2)}, {Title: "Count", Idx: 3, Prio: 2, Min: 5, Max: 7, Sort: cnt},
			{Title: "Sessions", Idx: 4, Grow: true, Min: 12}, {Title: "Window", Idx: 5, Prio: 3, Min: 6, Max: 8}}
	case pageClarifications:
		return []column{{Title: "Item", Elide: true, Min: 8, Max: 40, Sort: text(0)}, {Title: "Title", Idx: 1, Grow: true, Min: 12},
			{Title: "Asked by", Idx: 2, Prio: 2, Elide: true, Min: 8, Max: 24}, {Title: "Age", Idx: 3, Prio: 1, Fixed: 19, Min: 8, Cell: cellSLA, Sort: ago(sinceT)}}
	case pageOrphans:
		return []column{{Title: "Kind", Min: 8, Max: 30, Sort: text(0)}, {Title: "Item", Idx: 1, Elide: true, Min: 8, Max: 40, Sort: text(1)},
			{Title: "Evidence", Idx: 2, Grow: true, Min: 12}, {Title: "Action", Idx: 3, Prio: 1, Min: 8, Max: 30}}
	case pageActivity:
		return []column{{Title: "Age", Fixed: 6, Min: 6, Cell: cellAgo(sinceT), Sort: ago(sinceT)}, {Title: "Source", Idx: 1, Prio: 4, Min: 5, Max: 7},
			{Title: "Kind", Idx: 2, Prio: 1, Min: 8, Max: 26, Sort: text(2)}, {Title: "Target", Idx: 3, Elide: true, Min: 8, Max: 44, Sort: text(3)},
			{Title: "Session", Idx: 4, Prio: 5, Elide: true, Min: 8, Max: 24}, {Title: "Actor", Idx: 5, Prio: 3, Elide: true, Min: 6, Max: 20},
			{Title: "Result", Idx: 6, Prio: 1, Fixed: 9, Min: 7, Cell: stateCell(6)}, {Title: "Message", Idx: 7, Grow: true, Min: 12}}
	case pageSessions:
		return []column{{Title: "Session", Elide: true, Min: 8, Max: 40, Sort: text(0)}, {Title: "Role", Idx: 1, Prio: 3, Min: 4, Max: 14},
			{Title: "Profile", Idx: 2, Prio: 5, Min: 4, Max: 16}, {Title: "PID", Idx: 3, Prio: 4, Min: 3, Max: 8}, {Title: "Alive", Idx: 4, Prio: 1, Fixed: 7, Min: 5, Cell: stateCell(4)},
			{Title: "Heartbeat", Idx: 5, Prio: 1, Fixed: 7, Min: 6, Cell: cellAgo(hb), Sort: ago(hb)}, {Title: "Leases", Idx: 6, Prio: 2, Min: 6, Max: 6, Sort: cnt},
			{Title: "Status", Idx: 7, Prio: 3, Min: 5, Max: 12}}
	}
	return nil
}

// activityRows turns the merged timeline into rows; undoable audit attempts carry undo, and
// attempts whose outcome is unknown carry Verify and Resolve by hand. Unless heartbeats is
// set, heartbeat events are folded into one row per item with their count.
func activityRows(d *data, knows func(string) bool, heartbeats bool) []row {
	tl := d.timeline()
	rows := make([]row, 0, len(tl))
	folded := map[string]int{} // item → index of its heartbeat row
	d.heartbeatsFolded = 0
	for i := range tl {
		e := &tl[i]
		if !heartbeats && isHeartbeat(e.Kind) {
			d.heartbeatsFolded++
			k := e.Workspace + "\x00" + e.Source + "\x00" + e.Target
			if at, ok := folded[k]; ok {
				rows[at].Count++
				rows[at].Cells[7] = fmt.Sprintf("heartbeats ×%d, the newest shown", rows[at].Count)
				rows[at].finish()
				continue
			}
			folded[k] = len(rows)
		}
		key := "event:" + e.Source + "\x00" + e.Attempt + "\x00" + e.Kind + "\x00" + e.At.String()
		if e.Source == "steward" && e.Attempt != "" {
			// One row per attempt, whatever record of it is drawn: the selection stays on it
			// when a verify writes its missing outcome.
			key = "event:steward\x00" + e.Attempt
		}
		r := row{
			Key:   key,
			Cells: []string{"", e.Source, e.Kind, e.Target, e.Session, e.Actor, e.Result, e.Message},
			Since: e.At, Item: e.Item, Title: e.Source + " " + e.Kind + " " + e.Target, Count: 1,
			Sections: []section{{Title: "Event", Lines: []string{"at " + stamp(e.At), "source " + e.Source, "kind " + e.Kind,
				"target " + firstNonEmpty(e.TargetFull, e.Target, "—"), "session " + e.Session, "actor " + e.Actor, "result " + e.Result,
				"id " + e.Attempt, e.Message}}},
		}
		r.CopyID, r.CopyWhat = firstNonEmpty(e.Attempt, e.Item), "id"
		if e.Source == "steward" {
			r.CopyWhat = "attempt id"
		}
		if heartbeats || !isHeartbeat(e.Kind) {
			r.Count = 0
		} else {
			r.Key = "heartbeats:" + e.Source + "\x00" + e.Target
			r.Cells[7] = "heartbeats ×1"
		}
		if e.Inverse != nil && e.Result == string(govern.ResultSucceeded) && (knows == nil || knows(govern.ActionUndo)) {
			r.Actions = []actionRef{{Req: govern.Request{Action: govern.ActionUndo, Target: govern.Target{Attempt: e.Attempt}}, Label: "undo " + e.Kind}}
		}
		if e.Unsettled != nil {
			r.setUnsettled(e.Unsettled)
		}
		r.finish(e.TargetFull)
		if e.wsIndex > 0 {
			r = inWorkspace(r, e.wsIndex-1, e.Workspace, pageActivity)
		}
		rows = append(rows, r)
	}
	return rows
}

// isHeartbeat reports the event kinds that are heartbeats: the DB's lease.renew, the
// core's worker.heartbeat, and the seed's own heartbeat events.
func isHeartbeat(kind string) bool {
	return kind == "lease.renew" || kind == govern.ActionHeartbeat || strings.HasSuffix(kind, "heartbeat")
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
		e := event{At: at, Source: "steward", Kind: line(rec.Action), Actor: cut(line(actorName(rec.Actor))),
			Result: string(a.Status()), Attempt: cut(a.ID), Message: cut(rec.Code + " " + rec.Message)}
		if rec.Target.Item != nil {
			e.Item = cut(rec.Target.Item.String())
		}
		e.Target, e.TargetFull = targetCell(rec.Target), cut(targetString(rec.Target))
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

// actorName is who acted, in the words every surface uses (govern.Actor.Name).
func actorName(a govern.Actor) string { return a.Name() }

// inbox orders what needs a person: human-required first, then operator, each oldest first;
// routine rows are kept apart (the overview says how many, h shows them). Each row is its
// origin's row — the same actions, detail and keys — with the origin's view and key, so
// that a offers exactly what the row's own view offers and > goes there. An unreadable or
// incomplete lock file is never routine.
func inbox(d *data) []row {
	var rows, routine []row
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
			routine = append(routine, r)
		} else {
			rows = append(rows, r)
		}
	}
	for _, h := range d.Sources {
		if h.State == "unavailable" {
			src := row{Key: "src:" + h.Name, Item: h.Name, Title: h.Name + " unavailable", Sections: []section{{Title: "Source", Lines: []string{h.Name + " " + h.State + reason(h.Reason)}}}}
			add("human-required", "source", h.Name+" unavailable"+reason(h.Reason), &src, pageOverview)
		}
	}
	acts := activityRows(&data{merged: d.Audit}, nil, true)
	for i := range acts {
		a := &acts[i]
		if a.Unsettled != nil {
			add("human-required", "audit", "unknown outcome of "+a.Cells[2]+" — verify before retrying (attempt "+a.Unsettled.ID+")", a, pageActivity)
		}
	}
	for i := range d.Rows[pageContention] {
		r := &d.Rows[pageContention][i]
		class := "human-required"
		if r.Class == "routine" {
			class = "routine"
		}
		add(class, "contention", r.Cells[0]+" · "+r.Cells[4], r, pageContention)
	}
	for i := range d.Rows[pageClarifications] {
		r := &d.Rows[pageClarifications][i]
		add("human-required", "clarification", "asks: "+r.Cells[1], r, pageClarifications)
	}
	for i := range d.Rows[pageOrphans] {
		r := &d.Rows[pageOrphans][i]
		class := "operator"
		if len(r.Actions) == 0 && r.Rank != 0 {
			class = "routine"
		}
		add(class, "orphan", r.Cells[0]+" → "+r.Cells[3], r, pageOrphans)
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
	lines := strings.Split(wrapText(strings.Join(cs, " · "), p.width), "\n")
	for _, l := range strings.Split(wrapText("buckets: "+strings.Join(bs, " · "), p.width), "\n") {
		lines = append(lines, st.dim.Render(l))
	}
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
	for _, h := range d.Sources {
		for _, n := range h.Notes {
			lines = append(lines, st.dim.Render(truncate("       "+h.Name+" note: "+n, p.width)))
		}
	}
	routine := fmt.Sprintf("%d routine hidden (h shows them)", d.routine)
	if p.routine {
		routine = fmt.Sprintf("%d routine shown (h hides them)", d.routine)
	}
	lines = append(lines, st.bold.Render("Attention inbox")+" — "+routine)
	return strings.Join(lines, "\n")
}
