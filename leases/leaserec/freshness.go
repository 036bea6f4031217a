package leaserec

import (
	"sort"
	"time"
)

// Freshness is the computed freshness of a lease (seed #790 vocabulary).
// Terminal statuses released and abandoned pass through unchanged.
type Freshness string

// Freshness values.
const (
	FreshActive               Freshness = "active"
	FreshExpired              Freshness = "expired"
	FreshStaleDeadProcess     Freshness = "stale_dead_process"
	FreshStaleMissingWorktree Freshness = "stale_missing_worktree"
	FreshStaleMissedHeartbeat Freshness = "stale_missed_heartbeat"
	FreshStaleAbsoluteCap     Freshness = "stale_absolute_cap"
	freshReleased             Freshness = "released"
	freshAbandoned            Freshness = "abandoned"
)

// Stale reports whether f is one of the stale_* values (abandon needs one).
func (f Freshness) Stale() bool {
	switch f {
	case FreshStaleDeadProcess, FreshStaleMissingWorktree, FreshStaleMissedHeartbeat, FreshStaleAbsoluteCap:
		return true
	}
	return false
}

// ProcessState is what is known about a lease owner's process.
type ProcessState string

// Process states. A record written on another host is always unknown.
const (
	ProcessAlive   ProcessState = "alive"
	ProcessDead    ProcessState = "dead"
	ProcessUnknown ProcessState = "unknown"
)

// WorktreeState is what is known about a lease's worktree directory.
type WorktreeState string

// Worktree states.
const (
	WorktreePresent WorktreeState = "present"
	WorktreeMissing WorktreeState = "missing"
	WorktreeUnknown WorktreeState = "unknown"
)

// Evidence is what the caller observed about a lease's owner outside the DB.
type Evidence struct {
	Owner    ProcessState
	Worktree WorktreeState
}

// FreshnessResult is a lease's freshness at a given now: the value, the
// reasons behind it (including flags such as an unparseable expiry that kept
// the claim held), whether the stale warning applies, and the next instant
// at which Value would change (zero when no clock-driven change is ahead).
type FreshnessResult struct {
	Value        Freshness
	Reasons      []string
	Warning      bool
	NextDeadline time.Time
}

// Classify computes a lease's freshness. It is pure: now is a parameter.
// Rules: a terminal status passes through (status expired reads expired);
// an active lease whose expiry is missing or unparseable stays held (active)
// with the flag in Reasons; expires_at == now is expired; stale values need
// proven evidence (dead process, missing worktree) or recorded timestamps
// (absolute cap from created_at, missed heartbeat for heartbeat-lifecycle
// classes) and are never concluded from unknown.
func Classify(l Lease, p Policy, ev Evidence, now time.Time) FreshnessResult {
	r := classifyAt(l, p, ev, now)
	if r.Value != FreshActive && r.Value.Terminal() {
		return r
	}
	var cands []time.Time
	for _, t := range deadlines(l, p) {
		if t.After(now) {
			cands = append(cands, t)
		}
	}
	sort.Slice(cands, func(i, j int) bool { return cands[i].Before(cands[j]) })
	for _, t := range cands {
		if classifyAt(l, p, ev, t).Value != r.Value {
			r.NextDeadline = t
			break
		}
	}
	return r
}

// Terminal reports whether f is a value no clock can change (released,
// abandoned, and expired: once past expiry a lease stays expired).
func (f Freshness) Terminal() bool {
	return f == freshReleased || f == freshAbandoned || f == FreshExpired
}

// deadlines lists the instants at which a clock-driven rule flips.
func deadlines(l Lease, p Policy) []time.Time {
	var out []time.Time
	if l.ExpiresAt.OK() {
		out = append(out, l.ExpiresAt.Time)
	}
	if c, ok := p.AbsoluteCap(); ok && l.CreatedAt.OK() {
		out = append(out, l.CreatedAt.Time.Add(c))
	}
	if hb, ok := lastBeat(l); ok && p.HeartbeatLifecycleActive {
		out = append(out, hb.Add(p.MissedHeartbeatGrace()))
	}
	return out
}

// lastBeat is the last heartbeat, or created_at when none was recorded.
func lastBeat(l Lease) (time.Time, bool) {
	if l.LastHeartbeatAt.OK() {
		return l.LastHeartbeatAt.Time, true
	}
	if l.CreatedAt.OK() {
		return l.CreatedAt.Time, true
	}
	return time.Time{}, false
}

func classifyAt(l Lease, p Policy, ev Evidence, now time.Time) FreshnessResult {
	switch Status(Fold(string(l.Status))) {
	case StatusReleased:
		return FreshnessResult{Value: freshReleased, Reasons: []string{"status released"}}
	case StatusAbandoned:
		return FreshnessResult{Value: freshAbandoned, Reasons: []string{"status abandoned"}}
	case StatusExpired:
		return FreshnessResult{Value: FreshExpired, Reasons: []string{"status expired"}}
	}
	var r FreshnessResult
	if !l.Status.Active() {
		r.Reasons = append(r.Reasons, "unknown status "+quote(string(l.Status))+" treated as held")
	}
	switch l.ExpiresAt.State {
	case TimeRecorded:
		if !l.ExpiresAt.Time.After(now) {
			r.Value = FreshExpired
			r.Reasons = append(r.Reasons, "expires_at "+l.ExpiresAt.Raw+" is not after now")
			return r
		}
	default:
		r.Reasons = append(r.Reasons, "expires_at "+string(l.ExpiresAt.State)+": claim kept held, not assumed free")
	}
	if hb, ok := lastBeat(l); ok && !now.Before(hb.Add(p.StaleWarning())) {
		r.Warning = true
	}
	switch {
	case ev.Owner == ProcessDead:
		r.Value = FreshStaleDeadProcess
		r.Reasons = append(r.Reasons, "owner process is dead")
	case ev.Worktree == WorktreeMissing:
		r.Value = FreshStaleMissingWorktree
		r.Reasons = append(r.Reasons, "worktree "+quote(l.WorktreePath)+" is missing")
	}
	if r.Value != "" {
		return r
	}
	if c, ok := p.AbsoluteCap(); ok {
		if !l.CreatedAt.OK() {
			r.Reasons = append(r.Reasons, "created_at "+string(l.CreatedAt.State)+": absolute cap not checked")
		} else if !now.Before(l.CreatedAt.Time.Add(c)) {
			r.Value = FreshStaleAbsoluteCap
			r.Reasons = append(r.Reasons, "absolute cap of "+c.String()+" from created_at reached")
			return r
		}
	}
	if p.HeartbeatLifecycleActive {
		if hb, ok := lastBeat(l); ok && !now.Before(hb.Add(p.MissedHeartbeatGrace())) {
			r.Value = FreshStaleMissedHeartbeat
			r.Reasons = append(r.Reasons, "no heartbeat for "+p.MissedHeartbeatGrace().String())
			return r
		}
	}
	r.Value = FreshActive
	return r
}

func quote(s string) string { return "\"" + s + "\"" }

// SessionHeartbeatStale is the seed's session freshness window (900 s).
const SessionHeartbeatStale = 15 * time.Minute

// SessionLive reports whether a session counts as live: status active (in
// any case, as the seed's coordinator lower-cases it), its process not proven
// dead, and its last heartbeat (when recorded) younger than
// SessionHeartbeatStale. Unknown liveness counts as live.
func SessionLive(s Session, proc ProcessState, now time.Time) bool {
	if !SessionActive(s.Status) || proc == ProcessDead {
		return false
	}
	if s.LastHeartbeatAt.OK() && !now.Before(s.LastHeartbeatAt.Time.Add(SessionHeartbeatStale)) {
		return false
	}
	return true
}
