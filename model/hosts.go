package model

import (
	"strings"
	"time"
)

// LocksHere says how the lock source of a workspace whose lock directory lives on host is
// seen from the host named here (our own rule). A lock directory is a
// per-host directory: from another host its files are not read, so nothing is concluded
// from them — not a claim, not an orphan of a lock, not a lock-lease-mismatch, and not
// their absence. The source then reads StatusNotObserved with the reason, never "ok" with
// no locks (that would say "none") and never "unavailable" (nothing is broken). observe is
// true when host is empty or names this host (host names compare without case): the lock
// directory is read as usual.
func LocksHere(host, here string, now time.Time) (h SourceHealth, observe bool) {
	if host == "" || strings.EqualFold(host, here) {
		return SourceHealth{}, true
	}
	return SourceHealth{Status: StatusNotObserved, ScannedAt: now,
		Reason: "lock files not observed from this host: the lock directory is on " + host + ", this is " + here +
			"; lock-level verdicts withheld, the DB's shown"}, false
}

// observed reports whether the lock files are observed at all (a not-observed lock
// source carries no lock, whatever the input holds).
func (e *env) locksObserved() bool { return e.locks.Status != StatusNotObserved }
