package tui

import (
	"time"

	tea "charm.land/bubbletea/v2"

	"steward/govern"
)

// auditRun is the workbench's one verify or resolution in flight: the core settles one
// unknown attempt at a time, and its answer lands on the toast that announced it.
type auditRun struct {
	toast int // the toast of the verify or resolution in flight, 0 when none
}

// busy reports whether a verify or a resolution is still running.
func (a *auditRun) busy() bool { return a.toast != 0 }

// verify starts the core's verifier on the attempt id and announces it.
func (a *auditRun) verify(t *toasts, core *govern.Core, id string, now time.Time) tea.Cmd {
	a.toast = t.push(toastPending,
		"verifying attempt "+id+" from evidence (the core verifies every unknown attempt) …", now)
	return verifyCmd(core, id, a.toast)
}

// resolve records an attempt's outcome by hand through the core, or notes why it cannot
// start now.
func (a *auditRun) resolve(t *toasts, core *govern.Core, in resolveIntent, now time.Time) intent {
	if a.busy() {
		return noteIntent{"a verify or a resolution is still running; record this one when it has finished"}
	}
	a.toast = t.push(toastPending, "resolving attempt "+in.attempt+" as "+string(in.result)+" by hand …", now)
	return cmdIntent{resolveCmd(core, in.attempt, in.result, in.reason, a.toast)}
}

// done puts the core's answer on its toast, settles the attempts it settled, and frees the
// run when the answer is the one in flight.
func (a *auditRun) done(t *toasts, msg auditDoneMsg, now time.Time) {
	if msg.toast == a.toast {
		a.toast = 0
	}
	t.set(msg.toast, msg.state, msg.text, now)
	t.settleAttempt(msg.settled, now)
}
