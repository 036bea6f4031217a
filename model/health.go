package model

import (
	"strings"
	"time"

	"steward/leases/leaserec"
)

// HealthOf is the source health of a read the DB reader reported as h, scanned at at in d.
func HealthOf(h leaserec.Health, at time.Time, d time.Duration) SourceHealth {
	st := SourceHealth{
		Status:       Status(h.Status),
		Reason:       strings.Join(h.Reasons, "; "),
		ScannedAt:    at,
		ScanDuration: d,
		Notes:        h.Notes,
	}
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
func DBHealth(sessions, ls, items, events, meta leaserec.Health, now time.Time, d time.Duration) SourceHealth {
	h := HealthOf(worstOf(sessions, ls, items, events, meta), now, d)
	if h.Status == StatusUnavailable && ls.Status != leaserec.HealthUnavailable {
		h.Status = StatusDegraded
	}
	ok := func(x leaserec.Health) bool { return x.Status == leaserec.HealthOK || x.Status == "" }
	h.Partial = h.Status != StatusUnavailable && !(ok(sessions) && ok(ls) && ok(items))
	return h
}

func worstOf(hs ...leaserec.Health) leaserec.Health {
	out := leaserec.Health{Status: leaserec.HealthOK}
	rank := map[leaserec.HealthStatus]int{
		leaserec.HealthOK: 0, "": 0, leaserec.HealthDegraded: 1, leaserec.HealthUnavailable: 2}
	for _, h := range hs {
		if rank[h.Status] > rank[out.Status] {
			out.Status = h.Status
		}
		out.Reasons = append(out.Reasons, h.Reasons...)
		out.Notes = append(out.Notes, h.Notes...)
	}
	return out
}
