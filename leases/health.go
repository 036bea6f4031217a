package leases

import (
	"database/sql"
	"errors"
	"strings"

	"steward/leases/leaserec"
)

func okHealth() leaserec.Health { return leaserec.Health{Status: leaserec.HealthOK} }

// degrade marks h degraded (unless it is unavailable already) with a reason.
func degrade(h *leaserec.Health, reason string) {
	if h.Status == leaserec.HealthOK || h.Status == "" {
		h.Status = leaserec.HealthDegraded
	}
	h.Reasons = append(h.Reasons, reason)
}

// note adds a note to h; it never changes the status.
func note(h *leaserec.Health, n string) { h.Notes = append(h.Notes, n) }

// unavailable marks h unavailable with a reason.
func unavailable(h *leaserec.Health, reason string) {
	h.Status = leaserec.HealthUnavailable
	h.Reasons = append(h.Reasons, reason)
}

// HealthFromError turns an open or read error into an unavailable Health
// whose reason names the cause (missing file, not SQLite, corrupt, busy).
func HealthFromError(err error) leaserec.Health {
	if err == nil {
		return okHealth()
	}
	reason := err.Error()
	switch {
	case errors.Is(err, ErrNoDB):
		reason = "control-plane DB missing (missing authority, not an empty inventory): " + reason
	case errors.Is(err, ErrNotSQLite):
		reason = "not a SQLite database: " + reason
	case errors.Is(err, errCorrupt):
		reason = "database corrupt: " + reason
	case errors.Is(err, ErrBusy):
		reason = "database busy: " + reason
	case errors.Is(err, ErrUnreachable):
		reason = "control-plane DB server unreachable (missing authority, not an empty inventory): " + reason
	case errors.Is(err, ErrNotInitialised):
		reason = "control-plane DB not initialised (missing authority, not an empty inventory): " + reason
	}
	return leaserec.Health{Status: leaserec.HealthUnavailable, Reasons: []string{reason}}
}

// tier says what the absence of a column does to a section.
type tier int

const (
	// tierRequired: the section cannot be read without it (unavailable).
	tierRequired tier = iota
	// tierKey: a key column the seed has; without it the rows read cannot be placed
	// or told live, so the section is degraded (partial).
	tierKey
	// tierEnrichment: the feature that needs it says so; the section stays ok (a note).
	tierEnrichment
	// tierSilent: an optional column whose absence changes nothing steward shows (the
	// seed's proposed lease_generation_id: without it, transitions fence as before).
	tierSilent
)

// column is one column a reader asks for.
type column struct {
	name string
	tier tier
}

func cols(required, key, enrichment []string, silent ...string) []column {
	var out []column
	for _, g := range []struct {
		names []string
		t     tier
	}{{required, tierRequired}, {key, tierKey}, {enrichment, tierEnrichment}, {silent, tierSilent}} {
		for _, n := range g.names {
			out = append(out, column{n, g.t})
		}
	}
	return out
}

func names(n ...string) []string { return n }

// Columns each reader selects, by what their absence does (docs/formats.md gives the
// provenance of each: shown in the seed, inferred, or steward's).
var (
	sessionCols = cols(names("session_id"), names("status"),
		names("role", "profile", "pid", "host", "controller_instance_id", "started_at", "last_heartbeat_at", "ended_at"))
	workItemCols = cols(names("work_item_id"), names("remote", "org", "repo", "work_kind", "work_number"),
		names("title", "state"))
	leaseCols = cols(names("lease_id", "status"), names("work_item_id", "session_id"),
		names("role", "task_class", "phase", "created_at", "expires_at", "last_heartbeat_at", "heartbeat_count",
			"released_at", "expected_head_sha", "allowed_actions", "forbidden_actions",
			"provenance_json", "owner_pid", "owner_host", "worktree_path", "adopted_by_session_id",
			"adopted_from_session_id", "end_reason"), "lease_generation_id")
	assignmentCols = cols(names("assignment_id"), nil, names("lease_id", "session_id", "work_item_id",
		"role", "created_at", "status"))
	eventCols = cols(names("event_id", "event_type"), nil, names("work_item_id", "message",
		"created_at", "session_id", "detail_json"))
)

// absentNotes says what an absent enrichment column costs, where that is more than the
// column itself.
var absentNotes = map[string]string{
	"sessions.host":       "sessions are judged on the DB's host (the seed's single-host rule)",
	"leases.owner_host":   "leases are judged on the DB's host (the seed's single-host rule)",
	"leases.task_class":   "each lease's policy is chosen from its role and work kind (seed #790 table)",
	"leases.end_reason":   "why a lease ended is not recorded",
	"events.session_id":   "events do not name their session (the seed's events record no session)",
	"events.detail_json":  "events carry no detail: claim refusals are not recorded",
	"leases.expires_at":   "no lease expires: every active lease is kept held",
	"sessions.status":     "no session can be told ended",
	"events.created_at":   "events have no time: claim refusals are not counted",
	"events.work_item_id": "events name no work item",
}

// selectList plans a SELECT over the columns present in table. It returns
// the SQL column list and the names selected, and records missing columns
// in h (unavailable when a required one is absent: ok=false).
func selectList(info schemaInfo, table string, want []column, h *leaserec.Health) (
	sqlCols string, names []string, ok bool) {
	have, found := info.cols[table]
	if !found {
		unavailable(h, "table "+table+" is absent")
		return "", nil, false
	}
	exprs := make([]string, 0, len(want))
	for _, c := range want {
		if typ, ok := have[c.name]; ok {
			names = append(names, c.name)
			exprs = append(exprs, info.selectExpr(c.name, typ))
			continue
		}
		switch q := table + "." + c.name; c.tier {
		case tierRequired:
			unavailable(h, "column "+q+" is absent")
			return "", nil, false
		case tierKey:
			degrade(h, "column "+q+" is absent")
		case tierEnrichment:
			n := "column " + q + " is absent"
			if why := absentNotes[q]; why != "" {
				n += ": " + why
			}
			note(h, n)
		}
	}
	return strings.Join(exprs, ", "), names, true
}

// scanRows decodes every row with dec, flagging rows with problems in h.
func scanRows[T any](rows *sql.Rows, names []string, table string, h *leaserec.Health,
	dec func(getter) T, problems func(T) []string) ([]T, error) {
	// The rows are gathered in chunks and copied once into a slice of their number: a
	// slice grown by append copied every row again at each doubling (at 50,000 leases a
	// tenth of steward status's CPU, the copies of large rows under the collector's
	// write barriers) and held the old and the new array at once.
	var chunks [][]T
	cur := make([]T, 0, 64)
	n := 0
	err := scanEach(rows, names, table, h, dec, problems, func(v T) {
		if len(cur) == cap(cur) {
			chunks = append(chunks, cur)
			cur = make([]T, 0, min(2*cap(cur), 4096))
		}
		cur = append(cur, v)
		n++
	})
	if err != nil {
		return nil, err
	}
	var out []T
	if len(chunks) == 0 {
		if n > 0 {
			out = cur
		}
	} else {
		out = make([]T, 0, n)
		for _, c := range chunks {
			out = append(out, c...)
		}
		out = append(out, cur...)
	}
	return out, nil
}

// scanEach decodes every row of rows and hands it to put, as it is read (scanRows keeps
// them): a reader of a large table that needs one row at a time never holds them all.
func scanEach[T any](rows *sql.Rows, names []string, table string, h *leaserec.Health,
	dec func(getter) T, problems func(T) []string, put func(T)) error {
	defer rows.Close()
	idx := make(map[string]int, len(names))
	for i, n := range names {
		idx[n] = i
	}
	vals := make([]sql.NullString, len(names))
	ptrs := make([]any, len(names))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	get := func(c string) (string, bool) {
		i, ok := idx[c]
		if !ok || !vals[i].Valid {
			return "", false
		}
		return vals[i].String, true
	}
	bad := 0
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		v := dec(get)
		if len(problems(v)) > 0 {
			bad++
		}
		put(v)
	}
	if bad > 0 {
		note(h, plural(bad, table+" row")+rowProblems)
	}
	return rows.Err()
}

// agree is one when n is 1, else many: the verb that agrees with plural(n, ...).
func agree(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func plural(n int, what string) string {
	s := itoa(int64(n)) + " " + what
	if n != 1 {
		s += "s"
	}
	return s
}
