package tui

import (
	"slices"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// asker is who asked a clarification. Every worker may post through the one Gitea account,
// so the account is not the asker: the worker session is, and steward knows it only from
// its own record of the ask — the clarification.ask attempt whose question marker (Mark)
// the question carries, made by that session on that lease. Every string is already safe.
type asker struct {
	Mark                    string // the question's ask marker ("" when it has none)
	Account                 string // the Gitea account that posted the question
	Session, Lease, Attempt string // from the audit log; Session "" when unknown
	At                      time.Time
}

// cell is the Asked by cell: the session, else a plain "session unknown" and the account.
func (a asker) cell() string {
	switch {
	case a.Session != "":
		return a.Session
	case a.Account != "":
		return "session unknown (" + a.Account + ")"
	}
	return "session unknown"
}

// line is the detail's line: the session with its lease and attempt, or why it is unknown;
// then the account that posted it.
func (a asker) line() string {
	s := "asked by session " + a.Session + " (lease " + a.Lease + ", attempt " + a.Attempt + ")"
	if a.Session == "" {
		s = "asked by an unknown session: steward's audit log has no ask of this question"
		if a.Mark == "" {
			s = "asked by an unknown session: the question was not asked through steward (it carries no ask marker)"
		}
	}
	if a.Account != "" {
		s += "; posted as Gitea account " + a.Account
	}
	return s + " at " + stamp(a.At)
}

// attributeAsks names, on each clarification row, the worker session that asked it, from
// the audit log's asks (newest first: the newest attempt with the question's marker). The
// rows are copied, never changed in place: the digest's cache may hold them.
func (d *data) attributeAsks() {
	rows := d.Rows[pageClarifications]
	if len(rows) == 0 {
		return
	}
	asks := map[string]asker{}
	for _, e := range d.Audit {
		if e.Ask.Mark == "" || e.Ask.Session == "" {
			continue
		}
		if _, ok := asks[e.Ask.Mark]; !ok {
			asks[e.Ask.Mark] = e.Ask
		}
	}
	out := make([]*row, len(rows))
	for i, r := range rows {
		a := r.Asker
		a.Session, a.Lease, a.Attempt = "", "", ""
		if got, ok := asks[a.Mark]; ok && a.Mark != "" {
			a.Session, a.Lease, a.Attempt = got.Session, got.Lease, got.Attempt
		}
		if a != r.Asker && len(r.Cells) > 2 && len(r.Sections) > 0 && len(r.Sections[0].Lines) > 2 {
			c := *r // the row may be shown still: a new row replaces it
			r = &c
			r.Asker = a
			r.Cells = append([]string(nil), r.Cells...)
			r.Cells[2] = a.cell()
			r.w = append([]int(nil), r.w...)
			if len(r.w) > 2 {
				r.w[2] = ansi.StringWidth(r.Cells[2])
			}
			r.Sections = append([]section(nil), r.Sections...)
			r.Sections[0].Lines = append([]string(nil), r.Sections[0].Lines...)
			r.Sections[0].Lines[2] = a.line()
			r.Search += " " + haystack(a.Session)
		}
		out[i] = r
	}
	d.Rows[pageClarifications] = out
}

// askReread reads the audit log again when a question carries an ask marker no ask read so
// far names (the worker asked after the last read): once per such set of questions, so a
// question whose ask is not in the log does not re-read it every snapshot. last is the set
// it last read for.
type askReread struct{ last string }

// need is the audit read d's questions need, nil when none; gen is the root's audit read
// generation, counted up for it.
func (a *askReread) need(d *data, path string, gen *int) tea.Cmd {
	var marks []string
	for _, row := range d.Rows[pageClarifications] {
		if row.Asker.Mark != "" && row.Asker.Session == "" {
			marks = append(marks, row.Asker.Mark)
		}
	}
	slices.Sort(marks)
	key := strings.Join(marks, " ")
	if key == "" || key == a.last || path == "" {
		return nil
	}
	a.last = key
	*gen++
	return auditCmd(path, *gen)
}
