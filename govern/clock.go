package govern

import (
	"fmt"
	"time"

	"steward/leases"
	"steward/leases/leaserec"
	"steward/model"
)

// codeClockUntrusted refuses an action whose verdict rests on this host's clock — an
// expiry that passed, a heartbeat missed too long — when that clock cannot be trusted: it
// jumped forward while steward ran, or a record lies in its future. SQLite only: on
// PostgreSQL every such verdict is the DB server's clock's (leases.Clock).
const codeClockUntrusted = "clock_untrusted"

// clockTolerance is how far this host's clock may disagree — a jump against the
// monotonic clock, a record in its future — before it is not trusted to judge an expiry.
const clockTolerance = 2 * time.Second

// stamp is a time a record holds, named for the refusal.
type stamped struct {
	what string
	t    time.Time
}

// dbClocked reports whether the control-plane DB judges time by its own clock
// (PostgreSQL): then this host's clock decides no verdict.
func (c *Core) dbClocked() bool {
	r, err := c.reader()
	if err != nil {
		return false
	}
	_, ok := r.(leases.Clock)
	return ok
}

// clockJump is how far this host's wall clock moved ahead of the time that passed since
// the core was made, by the monotonic clock (zero when it cannot tell: a test clock
// without a monotonic one).
func (c *Core) clockJump() (jump, passed time.Duration) {
	if c.elapsed == nil {
		return 0, 0
	}
	passed = c.elapsed()
	return c.now().Round(0).Sub(c.wall0) - passed, passed
}

// clockRefusal refuses action, whose verdict rests on this host's clock at now, when that
// clock cannot be trusted (SQLite mode, which has no other clock to consult): it jumped
// forward more than clockTolerance against the monotonic clock since steward started, or
// one of stamps — times the records hold, written by a clock — lies more than
// clockTolerance in its future. nil when it can be trusted, or on PostgreSQL.
func (c *Core) clockRefusal(action string, now time.Time, stamps ...stamped) *Refusal {
	if c.dbClocked() {
		return nil
	}
	const how = " SQLite mode judges expiry by this host's clock, which every process on the DB must share and which " +
		"must only move forward steadily (docs/reliability.md §2d, Clocks)."
	if jump, passed := c.clockJump(); jump > clockTolerance {
		return refuse(
			codeClockUntrusted,
			fmt.Sprintf(
				"this host's clock moved %s ahead of the time that passed since steward started (%s by the monotonic clock), "+
					"so an expiry it judges passed may not have: %s refused, nothing changed. If the clock is right now (an NTP "+
					"correction), restart steward to trust it again; otherwise fix the clock first.",
				model.Span(jump),
				model.Span(passed),
				action,
			)+how,
		)
	}
	for _, s := range stamps {
		if !s.t.IsZero() && s.t.Sub(now) > clockTolerance {
			return refuse(
				codeClockUntrusted,
				fmt.Sprintf(
					"%s %s lies %s in this host's future (now %s): the clock that wrote it and this host's disagree, so no expiry "+
						"is judged by this one: %s refused, nothing changed. Fix the clocks (or wait until this host's passes %s).",
					s.what,
					stamp(s.t),
					model.Span(s.t.Sub(now)),
					stamp(now),
					action,
					stamp(s.t),
				)+how,
			)
		}
	}
	return nil
}

// leaseStamps are the times a lease records that a clock wrote.
func leaseStamps(l *leaserec.Lease) []stamped {
	var out []stamped
	if l.CreatedAt.OK() {
		out = append(out, stamped{"lease " + l.LeaseID + "'s created_at", l.CreatedAt.Time})
	}
	if l.LastHeartbeatAt.OK() {
		out = append(out, stamped{"lease " + l.LeaseID + "'s last_heartbeat_at", l.LastHeartbeatAt.Time})
	}
	return out
}
