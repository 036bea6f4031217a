package tui

import (
	"fmt"
	"strings"
	"time"

	"steward/govern"
	"steward/govern/actionid"
)

// activityView is the Activity view: one timeline of control-plane events and steward's
// own audit log, newest first; heartbeats folded into a count per item unless listed one by
// one (b). An audit attempt whose outcome is unknown carries Verify and Resolve by hand, a
// succeeded one with an inverse carries undo.
type activityView struct {
	*listView
	// heartbeats lists heartbeat events one by one; folded counts those folded otherwise.
	heartbeats bool
	folded     int
}

func newActivity(env *shared) tab {
	v := &activityView{listView: newList(pageActivity, env, activityColumns())}
	v.order = "" // a timeline: its order goes without saying
	v.status = v.window
	return v
}

func activityColumns() []column {
	return []column{
		{Title: "Age", Fixed: 6, Min: 6, Cell: cellAgo(rowSince), Sort: sortAge(rowSince)},
		{Title: "Source", Idx: 1, Prio: 4, Min: 5, Max: 7},
		{Title: "Kind", Idx: 2, Prio: 1, Min: 8, Max: 26, Sort: sortText(2)},
		{Title: "Target", Idx: 3, Elide: true, Min: 8, Max: 44, Sort: sortText(3)},
		{Title: "Session", Idx: 4, Prio: 5, Elide: true, Min: 8, Max: 24},
		{Title: "Actor", Idx: 5, Prio: 3, Elide: true, Min: 6, Max: 20},
		{Title: "Result", Idx: 6, Prio: 1, Fixed: 9, Min: 7, Cell: stateCell(6)},
		{Title: "Message", Idx: 7, Grow: true, Min: 12},
	}
}

func (v *activityView) setData(d *data) {
	rows, folded := activityRows(d, v.env.knows, v.heartbeats)
	v.folded = folded
	v.setRows(rows, rowsHint{})
}

// bindings add b (heartbeats one by one, or folded) to the list's.
func (v *activityView) bindings() bindings {
	bs := v.listView.bindings()
	if v.filtering {
		return bs
	}
	return append(bs, bind(v.env.keys.Table.Heartbeats, "Rows", false, nil, func() intent {
		v.heartbeats = !v.heartbeats
		v.setData(v.env.data)
		if v.heartbeats {
			return noteIntent{"heartbeats shown one by one (b folds them into a count per item)"}
		}
		return noteIntent{"heartbeats folded into a count per item (b shows them one by one)"}
	}))
}

// window says when the rows are a window of a longer history, and how many heartbeats are
// folded.
func (v *activityView) window() []string {
	d := v.env.data
	var parts []string
	if d.EventsTotal > len(d.Events) {
		parts = append(parts, fmt.Sprintf("events: last %s of %s", thousands(len(d.Events)), thousands(d.EventsTotal)))
	}
	if d.AuditTotal > len(d.Audit) {
		parts = append(parts, fmt.Sprintf("audit: last %s of %s", thousands(len(d.Audit)), thousands(d.AuditTotal)))
	}
	if !v.heartbeats && v.folded > 0 {
		parts = append(parts, fmt.Sprintf("%d heartbeat(s) folded (%s)", v.folded, v.env.keys.Table.Heartbeats.Help().Key))
	}
	if len(parts) == 0 {
		return nil
	}
	return []string{strings.Join(parts, " · ")}
}

// activityRows turns the merged timeline into rows; undoable audit attempts carry undo, and
// attempts whose outcome is unknown carry Verify and Resolve by hand. Unless heartbeats is
// set, heartbeat events are folded into one row per item with their count (nFolded counts
// them).
func activityRows(d *data, knows func(string) bool, heartbeats bool) (rows []*row, nFolded int) {
	tl := d.timeline()
	rows = make([]*row, 0, len(tl))
	folded := map[string]int{} // item → index of its heartbeat row
	for i := range tl {
		e := &tl[i]
		if !heartbeats && isHeartbeat(e.Kind) {
			nFolded++
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
				"target " + firstNonEmpty(
					e.TargetFull,
					e.Target,
					"—",
				), "session " + e.Session, "actor " + e.Actor, "result " + e.Result,
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
		if e.Inverse != nil && e.Result == string(govern.ResultSucceeded) && (knows == nil || knows(actionid.Undo)) {
			r.Actions = []actionRef{
				{Req: govern.Request{Action: actionid.Undo, Target: govern.Target{Attempt: e.Attempt}}, Label: "undo " + e.Kind},
			}
		}
		if e.Unsettled != nil {
			r.setUnsettled(e.Unsettled)
		}
		r.finish(e.TargetFull)
		if e.wsIndex > 0 {
			r = inWorkspace(r, e.wsIndex-1, e.Workspace, pageActivity)
		}
		rows = append(rows, &r)
	}
	return rows, nFolded
}

// isHeartbeat reports the event kinds that are heartbeats: the DB's lease.renew, the
// core's worker.heartbeat, and the seed's own heartbeat events.
func isHeartbeat(kind string) bool {
	return kind == "lease.renew" || kind == actionid.Heartbeat || strings.HasSuffix(kind, "heartbeat")
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
	r.Actions = append(
		r.Actions,
		actionRef{
			Req:   govern.Request{Action: localVerify, Target: govern.Target{Attempt: a.ID}},
			Label: "Verify the outcome from evidence (v)",
		},
		actionRef{
			Req:   govern.Request{Action: localResolve, Target: govern.Target{Attempt: a.ID}},
			Label: "Resolve by hand: succeeded or failed (R)",
		},
	)
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
		if a.Intent != nil {
			if id := govern.AskMarkOf(*a.Intent); id != "" {
				// The worker's session: the actor's when the core acted for a worker's
				// connection, else the session the request named (a worker's own core).
				s := firstNonEmpty(a.Intent.Actor.Session, a.Intent.Target.Session)
				e.Ask = asker{Mark: cut(id), Session: cut(s), Lease: cut(a.Intent.Target.LeaseID), Attempt: e.Attempt}
			}
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
			e.Unsettled = &attemptRef{
				ID:      e.Attempt,
				Action:  e.Kind,
				Target:  cut(targetString(rec.Target)),
				Actor:   e.Actor,
				Message: e.Message,
				At:      at,
			}
		}
		out = append(out, e)
	}
	return out
}

// actorName is who acted, in the words every surface uses (govern.Actor.Name).
func actorName(a govern.Actor) string { return a.Name() }
