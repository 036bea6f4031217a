package tui

import (
	"strconv"
	"time"

	"steward/govern"
	"steward/govern/actionid"
)

type (
	// ackIntent asks the core to preview acknowledging an attention entry (its key).
	ackIntent struct{ entry string }
	// snoozeIntent asks for the snooze menu of an entry (dur 0: what the row's key answers)
	// or, chosen in the menu, for the core's preview of snoozing it for dur.
	snoozeIntent struct {
		entry string
		dur   time.Duration
	}
)

func (ackIntent) isIntent()    {}
func (snoozeIntent) isIntent() {}

// ack is what acknowledging attention entry k answers: the core's preview of acknowledging
// it at the level it has now (the root asks for it), or why nothing is done.
func (a *attn) ack(k string, now time.Time) intent {
	k = a.entryOf(k) // an orphan of a dead worker: its incident
	e, ok := a.byKey[k]
	if k == "" || !ok {
		return noteIntent{"this row's attention entry is not in the latest snapshot; nothing to acknowledge"}
	}
	level := 0
	for _, x := range a.tr.Inbox(now, true) {
		if x.Entry.Key == k {
			level = x.Level
		}
	}
	return planIntent{
		asking: "asking the core to preview the acknowledgement…",
		req: govern.Request{Action: actionid.AttentionAck,
			Target: govern.Target{Entry: k}, Params: govern.AttentionParams{Evidence: e.Evidence, Level: strconv.Itoa(level)}},
	}
}

// snooze is what snoozing answers: the menu of how long (in.dur 0), or the core's preview of
// snoozing the entry for in.dur (the root asks for it), or why nothing is done.
func (a *attn) snooze(in snoozeIntent, o Options) intent {
	in.entry = a.entryOf(in.entry) // an orphan of a dead worker: its incident
	e, ok := a.byKey[in.entry]
	switch {
	case in.dur > 0 && !ok:
		return noteIntent{"the entry left the latest snapshot meanwhile; nothing to snooze"}
	case in.dur > 0:
		return planIntent{
			asking: "asking the core to preview the snooze…",
			req: govern.Request{Action: actionid.AttentionSnooze,
				Target: govern.Target{Entry: in.entry}, Params: govern.AttentionParams{Evidence: e.Evidence, For: in.dur.String()}},
		}
	case in.entry == "" || !ok:
		return noteIntent{"this row's attention entry is not in the latest snapshot; nothing to snooze"}
	case o.Core == nil:
		return noteIntent{noCore}
	}
	now := o.Now()
	return pushIntent{
		newSnoozeMenu(*o.Keys, in.entry, e.Title, now.Sub(a.since[in.entry]), e.SLA, o.Attention.snoozes(), now),
	}
}
