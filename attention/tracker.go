package attention

import (
	"sort"
	"time"

	"steward/model"
)

// EventType names an attention event (the `event` field of `steward watch --json`).
type EventType string

// The events. Entered, escalated, returned and unavailable may notify a person; the others
// inform.
const (
	// EventEntered: an entry appeared (or its evidence changed: to the person it is new).
	EventEntered EventType = "entered"
	// eventEscalated: an entry waited past its SLA (level 1), or one more SLA period after
	// that (levels 2..1+Reescalations).
	eventEscalated EventType = "escalated"
	// EventReturned: a snooze ended and the entry is still there.
	EventReturned EventType = "returned"
	// eventAcknowledged and eventSnoozed: someone acknowledged or snoozed the entry through
	// the governed core (By says who).
	eventAcknowledged EventType = "acknowledged"
	eventSnoozed      EventType = "snoozed"
	// eventCleared: the entry is gone from a snapshot that read its sources completely.
	eventCleared EventType = "cleared"
	// eventUnavailable and eventRecovered: a source could not be read, and can again.
	eventUnavailable EventType = "unavailable"
	eventRecovered   EventType = "recovered"
)

// Event is one thing a person may need to hear about.
type Event struct {
	Type  EventType `json:"event"`
	At    time.Time `json:"at"`
	Entry Entry     `json:"entry"`
	// Level is 0 when the entry is within its SLA, k ≥ 1 once it waited past its SLA
	// (k-1 re-escalations).
	Level int `json:"level"`
	// Age is how long the entry has been in its state; SLA its allowance.
	Age time.Duration `json:"-"`
	// Notify says the event should reach the person (bell, desktop, command): it is of a
	// human-required entry, a notifying type, and not the entry the person has selected
	// (an entry that appears under the cursor still notifies: they have not seen it yet).
	Notify bool `json:"notify"`
	// By and Until describe an acknowledgement or snooze.
	By    string    `json:"by,omitempty"`
	Until time.Time `json:"until,omitzero"`
}

// MarkKind is what a person did to an entry through the governed core.
type MarkKind string

// The marks.
const (
	markAck    MarkKind = "ack"
	markSnooze MarkKind = "snooze"
)

// Mark is one acknowledgement or snooze, as govern recorded it beside the audit log. It
// holds for the entry with Key while its evidence is still Evidence: an acknowledgement up
// to Level, a snooze until Until.
type Mark struct {
	Attempt  string    `json:"attempt"`
	At       time.Time `json:"at"`
	Kind     MarkKind  `json:"kind"`
	Key      string    `json:"key"`
	Evidence string    `json:"evidence"`
	Level    int       `json:"level"`
	Until    time.Time `json:"until,omitzero"`
	By       string    `json:"by"`
}

// Config tunes the tracker.
type Config struct {
	// Reescalations is how many more times an entry escalates after its first SLA breach,
	// one per further SLA period (notify.reescalations; default 2, 0 for none).
	Reescalations int
}

// Frame is one observation: a snapshot's entries at a time, the marks recorded so far, and
// the entry the person has selected on screen (empty: none, or no screen).
type Frame struct {
	Now      time.Time
	Entries  []Entry
	Unread   Unread
	Marks    []Mark
	Selected string
}

// Tracker turns successive frames into events. It is not safe for concurrent use: one
// goroutine (the workbench's Update, the watch loop) owns it.
type Tracker struct {
	cfg    Config
	live   map[string]*track
	marks  map[string]bool
	primed bool
	// rev counts the changes to what State returns: a caller keeping the state saves it
	// when rev moved.
	rev uint64
}

type track struct {
	entry     Entry
	since     time.Time
	announced int // the highest level announced; -1 none
	snoozed   bool
	acked     bool
}

// NewTracker returns a tracker with cfg.
func NewTracker(cfg Config) *Tracker {
	if cfg.Reescalations < 0 {
		cfg.Reescalations = 0
	}
	return &Tracker{cfg: cfg, live: map[string]*track{}, marks: map[string]bool{}}
}

// level is the entry's level at now: 0 within its SLA, then one more per SLA period waited,
// capped at 1+Reescalations.
func (t *Tracker) level(now, since time.Time, sla time.Duration) int {
	age := now.Sub(since)
	if sla <= 0 || age < sla {
		return 0
	}
	k := 1 + int((age-sla)/sla)
	if max := 1 + t.cfg.Reescalations; k > max {
		return max
	}
	return k
}

// latest is the last mark for each key (by time, then by order).
func latest(ms []Mark) map[string]Mark {
	out := map[string]Mark{}
	for _, m := range ms {
		if p, ok := out[m.Key]; !ok || !m.At.Before(p.At) {
			out[m.Key] = m
		}
	}
	return out
}

// Observe takes one frame and returns the events it makes, in a stable order (entries in
// the frame's order, then cleared ones by key).
func (t *Tracker) Observe(f Frame) []Event {
	var out []Event
	marks := latest(f.Marks)
	fresh := map[string]Mark{}
	for _, m := range f.Marks {
		if !t.marks[m.Attempt] {
			t.marks[m.Attempt] = true
			if t.primed {
				fresh[m.Key] = m
			}
		}
	}
	t.primed = true
	seen := map[string]bool{}
	for _, e := range f.Entries {
		seen[e.Key] = true
		st := t.live[e.Key]
		if st == nil || st.entry.Evidence != e.Evidence {
			st = &track{since: e.Since, announced: -1}
			if st.since.IsZero() {
				st.since, e.SinceFrom = f.Now, SinceFirstSeen
			}
			t.live[e.Key] = st
			t.rev++
		} else if e.Since.IsZero() {
			e.SinceFrom = SinceFirstSeen
		}
		e.Since = st.since
		st.entry = e
		lvl := t.level(f.Now, st.since, e.SLA)
		ev := Event{At: f.Now, Entry: e, Level: lvl, Age: f.Now.Sub(st.since)}
		m, marked := marks[e.Key]
		marked = marked && m.Evidence == e.Evidence
		acked := marked && m.Kind == markAck && m.Level >= lvl
		snoozed := marked && m.Kind == markSnooze && f.Now.Before(m.Until)
		if nm, ok := fresh[e.Key]; ok && nm.Evidence == e.Evidence && (acked || snoozed) {
			x := ev
			x.Type, x.By, x.Until = eventAcknowledged, nm.By, nm.Until
			if nm.Kind == markSnooze {
				x.Type = eventSnoozed
			}
			out = append(out, x)
		}
		if acked || snoozed {
			// Quiet, but not forgotten: the levels it passes while snoozed are announced when
			// the snooze ends; an acknowledgement covers the levels up to its own.
			if acked && lvl > st.announced {
				st.announced = lvl
				t.rev++
			}
			if st.acked != acked || st.snoozed != snoozed {
				st.acked, st.snoozed = acked, snoozed
				t.rev++
			}
			continue
		}
		wasSnoozed, wasAcked := st.snoozed, st.acked
		if wasSnoozed || wasAcked {
			st.snoozed, st.acked = false, false
			t.rev++
		}
		switch {
		case lvl > st.announced && st.announced < 0:
			ev.Type = EventEntered
			if e.Kind == KindSource {
				ev.Type = eventUnavailable
			}
		case lvl > st.announced:
			ev.Type = eventEscalated
		case wasSnoozed:
			ev.Type = EventReturned
		default:
			_ = wasAcked
			continue
		}
		st.announced = lvl
		t.rev++
		// The selected row is one the person is looking at — unless it only now appeared
		// (under the cursor): what is new is news wherever it lands.
		looking := e.Key == f.Selected && ev.Type != EventEntered && ev.Type != eventUnavailable
		ev.Notify = e.Need == model.NeedHuman && !looking
		out = append(out, ev)
	}
	var gone []string
	for k, st := range t.live {
		if seen[k] || unreadAny(f.Unread, st.entry) {
			continue
		}
		gone = append(gone, k)
	}
	sort.Strings(gone)
	for _, k := range gone {
		st := t.live[k]
		delete(t.live, k)
		t.rev++
		ev := Event{
			Type:  eventCleared,
			At:    f.Now,
			Entry: st.entry,
			Level: t.level(f.Now, st.since, st.entry.SLA),
			Age:   f.Now.Sub(st.since),
		}
		if st.entry.Kind == KindSource {
			ev.Type = eventRecovered
		}
		out = append(out, ev)
	}
	return out
}

// unreadAny reports whether one of the entry's sources was not read completely: its
// absence then proves nothing.
func unreadAny(u Unread, e Entry) bool {
	for _, s := range e.Sources {
		if u[s] {
			return true
		}
	}
	return false
}

// Row is one line of the attention inbox: an entry with its age, level and whether a mark
// keeps it out of the inbox now.
type Row struct {
	Entry   Entry
	Age     time.Duration
	Level   int
	Overdue bool
	// Quiet: acknowledged (at this level) or snoozed — not in the inbox.
	Acked, Snoozed bool
}

// Inbox is the tracker's entries at now (as of the last Observe), those a mark keeps quiet
// left out unless all is set, ordered by need (human-required first), then by how far past
// its SLA each is (most overdue first), then by key.
func (t *Tracker) Inbox(now time.Time, all bool) []Row {
	var out []Row
	for _, st := range t.live {
		r := Row{
			Entry:   st.entry,
			Age:     now.Sub(st.since),
			Level:   t.level(now, st.since, st.entry.SLA),
			Acked:   st.acked,
			Snoozed: st.snoozed,
		}
		r.Overdue = r.Level > 0
		if !all && (r.Acked || r.Snoozed) {
			continue
		}
		out = append(out, r)
	}
	rank := map[model.Need]int{model.NeedHuman: 0, model.NeedOperator: 1, model.NeedRoutine: 2}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if rank[a.Entry.Need] != rank[b.Entry.Need] {
			return rank[a.Entry.Need] < rank[b.Entry.Need]
		}
		if pa, pb := a.Age-a.Entry.SLA, b.Age-b.Entry.SLA; pa != pb {
			return pa > pb
		}
		return a.Entry.Key < b.Entry.Key
	})
	return out
}

// State is what a tracker knows that a restart must not forget: for each entry it tracks,
// when it entered its state (first seen, when the evidence carries no time), the highest
// level announced (so notified), and whether an acknowledgement or a snooze kept it quiet
// at the last frame. The marks themselves are the attention file's (govern keeps them).
type State struct {
	Entries []Remembered `json:"entries"`
}

// Remembered is one entry of a State.
type Remembered struct {
	Entry Entry `json:"entry"`
	// SLA and Sources are the entry's (Entry leaves them out of its JSON).
	SLA     time.Duration  `json:"sla_ns"`
	Sources []model.Source `json:"sources,omitempty"`
	// Announced is the highest level an event announced (-1: none yet).
	Announced int  `json:"announced"`
	Acked     bool `json:"acked,omitempty"`
	Snoozed   bool `json:"snoozed,omitempty"`
}

// Rev counts the changes to the tracker's State: it moves whenever an Observe changed
// what State returns, so a caller saves the state only then.
func (t *Tracker) Rev() uint64 { return t.rev }

// State returns what the tracker knows that a restart must not forget, entries by key.
func (t *Tracker) State() State {
	out := State{Entries: make([]Remembered, 0, len(t.live))}
	for _, st := range t.live {
		e := st.entry
		e.Since = st.since
		out.Entries = append(
			out.Entries,
			Remembered{Entry: e, SLA: e.SLA, Sources: e.Sources, Announced: st.announced, Acked: st.acked, Snoozed: st.snoozed},
		)
	}
	sort.Slice(out.Entries, func(i, j int) bool { return out.Entries[i].Entry.Key < out.Entries[j].Entry.Key })
	return out
}

// Restore gives a new tracker, before its first Observe, the State an earlier one left (a
// steward restarted): an entry still there with the same evidence keeps when it entered
// its state and the levels already announced — nothing already notified is notified again,
// and an SLA runs on from where it was —; one whose snooze ended meanwhile returns; one
// that escalated meanwhile is announced at its new level; one gone is cleared (when the
// frame read its sources completely). An entry without a key or a time is left out (it
// is then new to this tracker).
func (t *Tracker) Restore(s State) {
	for _, r := range s.Entries {
		if r.Entry.Key == "" || r.Entry.Since.IsZero() {
			continue // nothing to go on: the entry is new to this tracker
		}
		e := r.Entry
		e.SLA, e.Sources = r.SLA, r.Sources
		ann := max(r.Announced, -1)
		t.live[e.Key] = &track{entry: e, since: e.Since, announced: ann, acked: r.Acked, snoozed: r.Snoozed}
	}
}
