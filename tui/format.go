package tui

import (
	"fmt"
	"strings"
	"time"

	"charm.land/lipgloss/v2"

	"steward/govern"
	"steward/model"
)

// age renders a duration compactly: 42s, 3m05s, 2h10m, 3d4h — model.Span, the words every
// surface uses (steward status too).
func age(d time.Duration) string { return model.Span(d) }

// since renders the age of t at now, or "—" when t is unknown.
func since(t, now time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return age(now.Sub(t))
}

// cellAgo is a column cell: the age of a timestamp of the row.
func cellAgo(get func(*row) time.Time) func(*row, time.Time) (string, lipgloss.Style) {
	return func(r *row, now time.Time) (string, lipgloss.Style) {
		return since(get(r), now), lipgloss.NewStyle()
	}
}

// cellLeft is the time-left countdown: yellow under the policy's warning threshold, red and
// "expired" past the deadline, and "never" / "unknown" in words when there is no deadline.
func cellLeft(r *row, now time.Time) (string, lipgloss.Style) {
	if r.Deadline.IsZero() {
		return "unknown", st.warn
	}
	left := r.Deadline.Sub(now)
	switch {
	case left <= 0:
		return "expired " + age(-left), st.bad
	case r.Warn > 0 && left <= r.Warn:
		return age(left), st.warn
	}
	return age(left), st.good
}

// cellSLA is a clarification's age, red once it passed its SLA.
func cellSLA(r *row, now time.Time) (string, lipgloss.Style) {
	if r.Since.IsZero() {
		return "—", lipgloss.NewStyle()
	}
	a := now.Sub(r.Since)
	if r.SLA > 0 && a > r.SLA {
		return age(a) + " > SLA " + age(r.SLA), st.bad
	}
	if r.SLA > 0 {
		return age(a) + " / " + age(r.SLA), lipgloss.NewStyle()
	}
	return age(a), lipgloss.NewStyle()
}

// cellAge is an inbox row's age: since it entered its state, or — when steward only knows
// when it first saw it — at least that long ("≥4m").
func cellAge(r *row, now time.Time) (string, lipgloss.Style) {
	if r.SinceSeen && !r.Since.IsZero() {
		return "≥" + since(r.Since, now), lipgloss.NewStyle()
	}
	return since(r.Since, now), lipgloss.NewStyle()
}

// cellOverSLA is an attention row's SLA: the allowance while it is within it; past it,
// marked in words (and red) with how many SLA periods it has waited — "over 15m",
// "over 2×15m"; "—" for a row with no SLA.
func cellOverSLA(r *row, now time.Time) (string, lipgloss.Style) {
	if r.SLA <= 0 || r.Since.IsZero() {
		return "—", st.dim
	}
	k := int(now.Sub(r.Since) / r.SLA)
	switch {
	case k <= 0:
		return age(r.SLA), lipgloss.NewStyle()
	case k == 1:
		return "over " + age(r.SLA), st.bad
	}
	return fmt.Sprintf("over %d×%s", k, age(r.SLA)), st.bad
}

// stateStyle colours a source or result state word.
func stateStyle(s string) lipgloss.Style {
	switch s {
	case "ok", "succeeded", "alive", "canonical", "active":
		return st.good
	case "degraded", "pending", "partial", "unproven", "unknown", "legacy", "operator":
		return st.warn
	case "unavailable", "failed", "refused", "dead", "human-required":
		return st.bad
	}
	return st.dim
}

// stateCell colours a static cell by its word.
func stateCell(idx int) func(*row, time.Time) (string, lipgloss.Style) {
	return func(r *row, _ time.Time) (string, lipgloss.Style) {
		if idx >= len(r.Cells) {
			return "", lipgloss.NewStyle()
		}
		return r.Cells[idx], stateStyle(r.Cells[idx])
	}
}

// targetString names every part of an action's target.
func targetString(t govern.Target) string {
	var parts []string
	named := [][2]string{{"lease", t.LeaseID}, {"lock", t.LockFile}, {"session", t.Session}, {"attempt", t.Attempt}}
	for _, kv := range named {
		if kv[1] != "" {
			parts = append(parts, kv[0]+" "+line(kv[1]))
		}
	}
	if t.Item != nil {
		parts = append(parts, "item "+line(t.Item.String()))
	}
	return strings.Join(parts, " · ")
}

// targetCell is a target in one short cell: the item, else the lease, the lock file, the
// session or the attempt.
func targetCell(t govern.Target) string {
	switch {
	case t.Item != nil:
		return cut(line(t.Item.String()))
	case t.LeaseID != "":
		return "lease " + cut(line(t.LeaseID))
	case t.LockFile != "":
		return "lock " + cut(line(t.LockFile))
	case t.Session != "":
		return "session " + cut(line(t.Session))
	case t.Attempt != "":
		return "attempt " + cut(line(t.Attempt))
	}
	return ""
}
