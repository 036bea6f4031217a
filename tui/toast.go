package tui

import (
	"strings"
	"time"

	"steward/govern"
)

// toastState is where an action's toast stands.
type toastState string

const (
	toastPending   toastState = "pending"
	toastSucceeded toastState = "succeeded"
	toastRefused   toastState = "refused"
	toastFailed    toastState = "failed"
	toastUnknown   toastState = "unknown"
	toastNote      toastState = "note"
)

// toastTTL is how long a settled toast stays; unknown and pending ones stay.
const toastTTL = 8 * time.Second

// toast is one line of the user's channel: an action's progress or a note.
type toast struct {
	id      int
	state   toastState
	text    string
	attempt string
	at      time.Time
}

// toasts is the stack of toasts, oldest first.
type toasts struct {
	list []toast
	next int
}

func (t *toasts) push(state toastState, text string, now time.Time) int {
	t.next++
	t.list = append(t.list, toast{id: t.next, state: state, text: text, at: now})
	return t.next
}

// settle turns the pending toast id into the outcome's state; unknown names the attempt.
func (t *toasts) settle(id int, out govern.Outcome, now time.Time) {
	for i := range t.list {
		if t.list[i].id != id {
			continue
		}
		tt := &t.list[i]
		tt.state = toastState(out.Result)
		tt.attempt = line(out.Attempt)
		tt.at = now
		msg := line(out.Action)
		switch out.Result {
		case govern.ResultSucceeded:
			msg += " succeeded"
			if len(out.Effects) > 0 {
				msg += ": " + line(out.Effects[0])
			}
		case govern.ResultUnknown:
			msg += " outcome UNKNOWN — may have taken effect; verify before retrying (attempt " + tt.attempt + "; in Activity v verifies, R resolves; x dismisses)"
		default:
			msg += " " + string(out.Result) + ": " + line(out.Code) + " " + line(out.Message)
		}
		tt.text = msg
	}
}

// set gives toast id a new state and text (the end of a verify or a resolution).
func (t *toasts) set(id int, state toastState, text string, now time.Time) {
	for i := range t.list {
		if t.list[i].id == id {
			t.list[i].state, t.list[i].text, t.list[i].at = state, text, now
		}
	}
}

// settleAttempt turns the unknown toasts of settled attempts into their result, saying so;
// they then expire like any settled toast.
func (t *toasts) settleAttempt(settled map[string]govern.Result, now time.Time) {
	for i := range t.list {
		x := &t.list[i]
		res, ok := settled[x.attempt]
		if x.state != toastUnknown || x.attempt == "" || !ok {
			continue
		}
		x.state, x.at = toastState(res), now
		x.text = "attempt " + x.attempt + " was unknown, now settled as " + string(res) + " (see Activity)"
	}
}

// expire drops settled toasts older than their time to live; unknown ones stay.
func (t *toasts) expire(now time.Time) {
	keep := t.list[:0]
	for _, x := range t.list {
		if x.state == toastPending || x.state == toastUnknown || now.Sub(x.at) < toastTTL {
			keep = append(keep, x)
		}
	}
	t.list = keep
}

// dismiss removes the oldest toast that is not pending.
func (t *toasts) dismiss() {
	for i, x := range t.list {
		if x.state != toastPending {
			t.list = append(t.list[:i], t.list[i+1:]...)
			return
		}
	}
}

// view draws the newest toasts, at most n lines, each cut to w.
func (t *toasts) view(w, n int) []string {
	var out []string
	start := max(len(t.list)-n, 0)
	for _, x := range t.list[start:] {
		label := "[" + strings.ToUpper(string(x.state)) + "] "
		out = append(out, stateStyle(string(x.state)).Render(truncate(label+x.text, w)))
	}
	return out
}
