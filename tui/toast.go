package tui

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

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

// maxHistory bounds the message history.
const maxHistory = 200

// toast is one message of the user's channel: an action's progress or a note.
type toast struct {
	id      int
	state   toastState
	text    string
	attempt string
	at      time.Time
}

// toasts is the stack of toasts on screen, oldest first, and the history of every message
// (newest last), so that one that vanished can be read in full (t).
type toasts struct {
	list    []toast
	history []toast
	next    int
}

func (t *toasts) push(state toastState, text string, now time.Time) int {
	t.next++
	x := toast{id: t.next, state: state, text: text, at: now}
	t.list = append(t.list, x)
	t.record(x)
	return t.next
}

// record keeps x's latest words in the history.
func (t *toasts) record(x toast) {
	for i := range t.history {
		if t.history[i].id == x.id {
			t.history[i] = x
			return
		}
	}
	t.history = append(t.history, x)
	if len(t.history) > maxHistory {
		t.history = t.history[len(t.history)-maxHistory:]
	}
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
				msg += ": " + line(strings.Join(out.Effects, "; "))
			}
		case govern.ResultUnknown:
			msg += " outcome UNKNOWN — may have taken effect; verify before retrying (attempt " + tt.attempt + "; in " +
				"Activity v verifies, R resolves; x dismisses)"
		default:
			msg += " " + string(out.Result) + ": " + line(out.Code) + " " + line(out.Message)
			if len(out.Effects) > 0 {
				msg += " — done before it stopped: " + line(strings.Join(out.Effects, "; "))
			}
		}
		tt.text = msg
		t.record(*tt)
	}
}

// set gives toast id a new state and text (the end of a verify or a resolution).
func (t *toasts) set(id int, state toastState, text string, now time.Time) {
	for i := range t.list {
		if t.list[i].id == id {
			t.list[i].state, t.list[i].text, t.list[i].at = state, text, now
			t.record(t.list[i])
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
		t.record(*x)
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

// dismissible reports whether a toast can be dismissed (any but a pending one).
func (t *toasts) dismissible() bool {
	for _, x := range t.list {
		if x.state != toastPending {
			return true
		}
	}
	return false
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

// view draws the newest toasts wrapped at w, at most n lines; a toast cut short says where
// its whole text is (hint: the history's key), and so do older toasts that no longer fit.
func (t *toasts) view(w, n int, hint string) []string {
	out, older := t.fit(w, n, hint)
	if older > 0 && n > 1 {
		out, older = t.fit(w, n-1, hint)
		out = append(
			[]string{st.dim.Render(truncate(fmt.Sprintf("+%d older message(s) — %s shows them all", older, hint), w))},
			out...)
	}
	return out
}

// fit draws the newest toasts that fit in n lines and says how many older ones did not.
func (t *toasts) fit(w, n int, hint string) ([]string, int) {
	var out []string
	i := len(t.list) - 1
	for ; i >= 0 && len(out) < n; i-- {
		x := t.list[i]
		label := "[" + strings.ToUpper(string(x.state)) + "] "
		ls := hang(label, x.text, w)
		if room := n - len(out); len(ls) > room {
			ls = ls[:room]
			more := " … (" + hint + ": all of it)"
			ls[room-1] = ansi.Truncate(ls[room-1], max(w-ansi.StringWidth(more), 1), "") + more
		}
		for j := range ls {
			ls[j] = stateStyle(string(x.state)).Render(truncate(ls[j], w))
		}
		out = append(ls, out...)
	}
	return out, i + 1
}
