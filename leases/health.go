package leases

import (
	"database/sql"
	"errors"
	"strings"
)

// HealthStatus is the readability of one section of the DB.
type HealthStatus string

// Health statuses.
const (
	HealthOK          HealthStatus = "ok"
	HealthDegraded    HealthStatus = "degraded"
	HealthUnavailable HealthStatus = "unavailable"
)

// Health says whether a section was read fully, partly (degraded: a missing
// optional table or column, undecodable values) or not at all, and why.
type Health struct {
	Status  HealthStatus
	Reasons []string
}

func okHealth() Health { return Health{Status: HealthOK} }

func (h *Health) degrade(reason string) {
	if h.Status == HealthOK || h.Status == "" {
		h.Status = HealthDegraded
	}
	h.Reasons = append(h.Reasons, reason)
}

func (h *Health) unavailable(reason string) {
	h.Status = HealthUnavailable
	h.Reasons = append(h.Reasons, reason)
}

// HealthFromError turns an open or read error into an unavailable Health
// whose reason names the cause (missing file, not SQLite, corrupt, busy).
func HealthFromError(err error) Health {
	if err == nil {
		return okHealth()
	}
	reason := err.Error()
	switch {
	case errors.Is(err, ErrNoDB):
		reason = "control-plane DB missing (missing authority, not an empty inventory): " + reason
	case errors.Is(err, ErrNotSQLite):
		reason = "not a SQLite database: " + reason
	case errors.Is(err, ErrCorrupt):
		reason = "database corrupt: " + reason
	case errors.Is(err, ErrBusy):
		reason = "database busy: " + reason
	}
	return Health{Status: HealthUnavailable, Reasons: []string{reason}}
}

// column is one column a reader asks for.
type column struct {
	name     string
	required bool
}

func cols(required []string, optional ...string) []column {
	var out []column
	for _, n := range required {
		out = append(out, column{n, true})
	}
	for _, n := range optional {
		out = append(out, column{n, false})
	}
	return out
}

// Columns each reader selects. Required columns make the section
// unavailable when absent; optional ones degrade it.
var (
	sessionCols = cols([]string{"session_id"}, "role", "profile", "pid", "host",
		"controller_instance_id", "status", "started_at", "last_heartbeat_at", "ended_at")
	workItemCols = cols([]string{"work_item_id"}, "remote", "org", "repo", "work_kind",
		"work_number", "title", "state")
	leaseCols = cols([]string{"lease_id", "status"}, "work_item_id", "session_id", "role",
		"task_class", "phase", "created_at", "expires_at", "last_heartbeat_at", "heartbeat_count",
		"released_at", "expected_head_sha", "allowed_actions", "forbidden_actions",
		"provenance_json", "owner_pid", "owner_host", "worktree_path", "adopted_by_session_id",
		"adopted_from_session_id", "end_reason")
	assignmentCols = cols([]string{"assignment_id"}, "lease_id", "session_id", "work_item_id",
		"role", "created_at", "status")
	eventCols = cols([]string{"event_id", "event_type"}, "work_item_id", "message",
		"created_at", "session_id", "detail_json")
)

// selectList plans a SELECT over the columns present in table. It returns
// the SQL column list and the names selected, and records missing columns
// in h (unavailable when a required one is absent: ok=false).
func selectList(info schemaInfo, table string, want []column, h *Health) (sqlCols string, names []string, ok bool) {
	have, found := info[table]
	if !found {
		h.unavailable("table " + table + " is absent")
		return "", nil, false
	}
	for _, c := range want {
		if have[c.name] {
			names = append(names, c.name)
			continue
		}
		if c.required {
			h.unavailable("column " + table + "." + c.name + " is absent")
			return "", nil, false
		}
		h.degrade("column " + table + "." + c.name + " is absent")
	}
	return strings.Join(names, ", "), names, true
}

// scanRows decodes every row with dec, flagging rows with problems in h.
func scanRows[T any](rows *sql.Rows, names []string, table string, h *Health,
	dec func(getter) T, problems func(T) []string) ([]T, error) {
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
	var out []T
	bad := 0
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		v := dec(get)
		if len(problems(v)) > 0 {
			bad++
		}
		out = append(out, v)
	}
	if bad > 0 {
		h.degrade(plural(bad, table+" row") + " with undecodable values (see each row's Problems)")
	}
	return out, rows.Err()
}

func plural(n int, what string) string {
	s := itoa(int64(n)) + " " + what
	if n != 1 {
		s += "s"
	}
	return s
}
