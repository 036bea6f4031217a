package model

import (
	"strings"
	"time"

	"steward/leases"
)

// HealthOf is the source health of a read the DB reader reported as h, scanned at at in d.
func HealthOf(h leases.Health, at time.Time, d time.Duration) SourceHealth {
	st := SourceHealth{Status: Status(h.Status), Reason: strings.Join(h.Reasons, "; "), ScannedAt: at, ScanDuration: d, Notes: h.Notes}
	if st.Status == "" {
		st.Status = StatusOK
	}
	st.Partial = st.Status == StatusDegraded
	return st
}

// DBHealth is the DB source's health from its sections: the worst status, with every
// reason and note. It is partial only when a section the whole-DB verdicts rest on —
// sessions, leases, work items — was not read completely: then the set of rows itself may
// be incomplete, and orphan-lease, lock-lease-mismatch and "free" are withheld. An events
// table or schema_meta that cannot be read degrades the DB without making it partial (no
// verdict rests on an absent event); an absent enrichment column, or a row with
// undecodable values, is only a note (that row's own item says it is unproven).
func DBHealth(sessions, ls, items, events, meta leases.Health, now time.Time, d time.Duration) SourceHealth {
	h := HealthOf(worstOf(sessions, ls, items, events, meta), now, d)
	if h.Status == StatusUnavailable && ls.Status != leases.HealthUnavailable {
		h.Status = StatusDegraded
	}
	ok := func(x leases.Health) bool { return x.Status == leases.HealthOK || x.Status == "" }
	h.Partial = h.Status != StatusUnavailable && !(ok(sessions) && ok(ls) && ok(items))
	return h
}

func worstOf(hs ...leases.Health) leases.Health {
	out := leases.Health{Status: leases.HealthOK}
	rank := map[leases.HealthStatus]int{leases.HealthOK: 0, "": 0, leases.HealthDegraded: 1, leases.HealthUnavailable: 2}
	for _, h := range hs {
		if rank[h.Status] > rank[out.Status] {
			out.Status = h.Status
		}
		out.Reasons = append(out.Reasons, h.Reasons...)
		out.Notes = append(out.Notes, h.Notes...)
	}
	return out
}
