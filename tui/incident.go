package tui

import (
	"fmt"
	"strings"
	"time"

	"steward/attention"
	"steward/govern"
	"steward/govern/actionid"
	"steward/model"
)

// incident is a dead worker's incident (model.Incident) as the inbox shows it: one row for
// the worker, whatever number of orphans — lease and lock file per item — it left.
type incident struct {
	in  *model.Incident
	key string // its attention key (attention.IncidentKey), also its row's key
	// parts are the keys of its orphans' rows in the Orphans view.
	parts []string
}

// incidentsOf groups the snapshot's orphans by root cause, as package attention does.
func incidentsOf(s *model.Snapshot) []incident {
	var out []incident
	for _, in := range model.Incidents(s.Orphans, s.Sessions) {
		g := incident{in: in, key: attention.IncidentKey(in)}
		for _, o := range in.Orphans {
			g.parts = append(g.parts, orphanKey(o))
		}
		out = append(out, g)
	}
	return out
}

// row is the incident's inbox row, from its parts' rows in the Orphans view: plain words on
// the row ("worker S died holding acme/widgets#7"), the recover plan of each item as its
// action (c recovers the first; a offers the plan of every item, then each part's own
// action), and in the detail each part with its kind and evidence. what and itemCell are the
// inbox's What and Item cells.
func (g incident) row(parts []*row) (r row, what, itemCell string) {
	items := make([]string, len(g.in.Items))
	for i := range g.in.Items {
		items[i] = itemStr(&g.in.Items[i])
	}
	sess := cut(g.in.SessionID)
	r = row{
		Key:      g.key,
		ID:       g.key,
		Item:     items[0],
		Title:    attention.IncidentTitle(sess, items),
		CopyID:   sess,
		CopyWhat: "session",
	}
	recover := map[string]bool{}
	for _, p := range parts {
		if p.Recover != nil {
			recover[p.Item] = true
		}
		if !p.Urgent.IsZero() && (r.Urgent.IsZero() || p.Urgent.Before(r.Urgent)) {
			r.Urgent = p.Urgent
		}
	}
	for i := range g.in.Items {
		if recover[items[i]] {
			it := govItem(&g.in.Items[i])
			label := "recover " + items[i] + " (end its lease, retire its lock, in one plan)"
			if r.Recover == nil {
				r.Recover, label = it, label+" — c"
			}
			r.Actions = append(
				r.Actions,
				actionRef{Req: govern.Request{Action: actionid.Recover, Target: govern.Target{Item: it}}, Label: label},
			)
		}
	}
	plans := len(r.Actions)
	for _, p := range parts { // then each part's own action, as its own row offers it
		r.Actions = append(r.Actions, p.Actions...)
	}
	// The inbox's Item column names the item (the first and how many more), so its What cell
	// says the rest — short enough for 80 columns.
	what, itemCell = "worker "+sess+" died", items[0]
	if len(items) > 1 {
		itemCell = fmt.Sprintf("%s +%d", items[0], len(items)-1)
		what = fmt.Sprintf("worker %s died holding %d items", sess, len(items))
	}
	switch {
	case plans == 1:
		what += " → recover"
	case plans > 1:
		what += " → recover each"
	case len(r.Actions) > 0:
		what += " → " + r.Actions[0].Label
	}
	r.detail = func(at time.Time) []section {
		head := section{Title: "Incident: dead-worker", Lines: []string{
			"worker session " + sess + ": its process is gone (proven on the host that wrote its records)",
			"holds " + strings.Join(items, ", "),
			"way out: recover each item — its lease ends and its lock file is retired in one plan, previewed first; the " +
				"item returns to the pool"}}
		out := []section{head}
		for _, p := range parts {
			for _, s := range p.sections(at) {
				s.Title = p.Cells[0] + " on " + p.Item + " — " + s.Title
				out = append(out, s)
			}
			if len(p.Actions) > 0 {
				out[len(out)-1].Lines = append(out[len(out)-1].Lines, "its own action: "+p.Cells[3])
			}
		}
		return out
	}
	parts0 := make([]string, 0, len(parts))
	for _, p := range parts {
		parts0 = append(parts0, p.Cells[0], p.ID)
	}
	r.Cells = []string{"dead-worker", itemCell, r.Title, what}
	r.finish(append(parts0, sess)...)
	return r, what, itemCell
}

// orphanKey is the key of an orphan's row in the Orphans view.
func orphanKey(o *model.Orphan) string {
	return "orphan:" + string(o.Kind) + "\x00" + o.LockFile + "\x00" + o.LeaseID + "\x00" + itemStr(o.Item)
}
