package attention

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"steward/model"
)

// fakeClock is the test's clock: each step advances it.
type fakeClock struct{ t time.Time }

func (c *fakeClock) add(d time.Duration) time.Time { c.t = c.t.Add(d); return c.t }

var t0 = time.Date(2026, 7, 23, 10, 0, 0, 0, time.UTC)

func question(n int, asked time.Time) Entry {
	return Entry{Key: fmt.Sprintf("clarification:acme/w#%d", n), Kind: KindClarification, Need: model.NeedHuman,
		Item: fmt.Sprintf("acme/w#%d", n), Title: "Which API?", Since: asked, SinceFrom: SinceEvidence, SLA: time.Hour,
		Evidence: "asked-" + asked.Format(time.RFC3339), Sources: []model.Source{model.SourceGitea}}
}

func orphan(lease string) Entry {
	return Entry{Key: "orphan:active-lease-past-expiry:" + lease, Kind: KindOrphan, Sub: "active-lease-past-expiry",
		Need: model.NeedOperator, Title: "lease " + lease, SLA: time.Hour, Evidence: "e-" + lease,
		Sources: []model.Source{model.SourceLocks, model.SourceDB}}
}

var dbDown = Entry{Key: "source:db", Kind: KindSource, Sub: "db", Need: model.NeedHuman, Title: "db unavailable", SLA: 15 * time.Minute, Evidence: "unavailable"}

// step is one frame of a case: advance the clock, observe, compare the events.
type step struct {
	name     string
	advance  time.Duration
	entries  []Entry
	unread   Unread
	marks    []Mark
	selected string
	// want lists the events as type:key:notify(!) and level, e.g. "entered q1 !0".
	want []string
	// inbox, when set, is the keys of the inbox after the step.
	inbox []string
}

func short(k string) string {
	switch {
	case strings.HasPrefix(k, "clarification:acme/w#"):
		return "q" + strings.TrimPrefix(k, "clarification:acme/w#")
	case strings.HasPrefix(k, "orphan:"):
		return "o"
	case k == "source:db":
		return "db"
	}
	return k
}

func render(evs []Event) []string {
	out := []string{}
	for _, e := range evs {
		n := " "
		if e.Notify {
			n = "!"
		}
		out = append(out, fmt.Sprintf("%s %s %s%d", e.Type, short(e.Entry.Key), n, e.Level))
	}
	return out
}

func ack(e Entry, level int, at time.Time) Mark {
	return Mark{Attempt: "att-ack-" + e.Key + at.String(), At: at, Kind: markAck, Key: e.Key, Evidence: e.Evidence, Level: level, By: "maint"}
}

func snooze(e Entry, at, until time.Time) Mark {
	return Mark{Attempt: "att-snz-" + e.Key + at.String(), At: at, Kind: markSnooze, Key: e.Key, Evidence: e.Evidence, Until: until, By: "maint"}
}

// trackerCase is one scenario of TestTracker: a config and its frames.
type trackerCase struct {
	name  string
	cfg   Config
	steps []step
}

func trackerCases() []trackerCase {
	q1 := question(1, t0)
	q1b := question(1, t0.Add(3*time.Hour)) // asked again: new evidence
	q2 := question(2, t0)
	o := orphan("L1")
	return []trackerCase{
		{name: "enter notifies once; re-render and re-snapshot do not notify again", cfg: Config{Reescalations: 2}, steps: []step{
			{name: "empty", want: []string{}},
			{name: "a question appears", advance: time.Minute, entries: []Entry{q1}, want: []string{"entered q1 !0"}, inbox: []string{"q1"}},
			{name: "the same snapshot again", entries: []Entry{q1}, want: []string{}},
			{name: "a new snapshot, same evidence", advance: 10 * time.Second, entries: []Entry{question(1, t0)}, want: []string{}},
		}},
		{name: "SLA breach escalates; re-escalations stop at the limit", cfg: Config{Reescalations: 1}, steps: []step{
			{name: "enter", advance: time.Minute, entries: []Entry{q1}, want: []string{"entered q1 !0"}},
			{name: "just before the SLA", advance: 58*time.Minute + 59*time.Second, entries: []Entry{q1}, want: []string{}},
			{name: "at the SLA", advance: time.Second, entries: []Entry{q1}, want: []string{"escalated q1 !1"}},
			{name: "again, same level", advance: time.Minute, entries: []Entry{q1}, want: []string{}},
			{name: "one more SLA period: re-escalation 1 of 1", advance: time.Hour, entries: []Entry{q1}, want: []string{"escalated q1 !2"}},
			{name: "past the limit: nothing more", advance: 5 * time.Hour, entries: []Entry{q1}, want: []string{}},
		}},
		{name: "no re-escalation when the limit is 0", cfg: Config{Reescalations: 0}, steps: []step{
			{advance: 2 * time.Hour, entries: []Entry{q1}, want: []string{"entered q1 !1"}},
			{advance: 5 * time.Hour, entries: []Entry{q1}, want: []string{}},
		}},
		{name: "an entry already overdue when first seen enters once at its level", cfg: Config{Reescalations: 3}, steps: []step{
			{advance: 150 * time.Minute, entries: []Entry{q1}, want: []string{"entered q1 !2"}},
			{advance: time.Hour, entries: []Entry{q1}, want: []string{"escalated q1 !3"}},
		}},
		{name: "ack: gone until the evidence changes", cfg: Config{Reescalations: 2}, steps: []step{
			{advance: time.Minute, entries: []Entry{q1}, want: []string{"entered q1 !0"}},
			{name: "acknowledged at level 0", advance: time.Minute, entries: []Entry{q1}, marks: []Mark{ack(q1, 0, t0.Add(2*time.Minute))},
				want: []string{"acknowledged q1  0"}, inbox: []string{}},
			{name: "still acknowledged", advance: time.Minute, entries: []Entry{q1}, marks: []Mark{ack(q1, 0, t0.Add(2*time.Minute))}, want: []string{}, inbox: []string{}},
			{name: "asked again: a new entry", advance: 3 * time.Hour, entries: []Entry{q1b}, marks: []Mark{ack(q1, 0, t0.Add(2*time.Minute))},
				want: []string{"entered q1 !0"}, inbox: []string{"q1"}},
		}},
		{name: "ack: back when it escalates past the acknowledged level", cfg: Config{Reescalations: 2}, steps: []step{
			{advance: time.Minute, entries: []Entry{q1}, want: []string{"entered q1 !0"}},
			{advance: time.Minute, entries: []Entry{q1}, marks: []Mark{ack(q1, 0, t0.Add(2*time.Minute))}, want: []string{"acknowledged q1  0"}},
			{name: "SLA breached", advance: time.Hour, entries: []Entry{q1}, marks: []Mark{ack(q1, 0, t0.Add(2*time.Minute))}, want: []string{"escalated q1 !1"}, inbox: []string{"q1"}},
			{name: "acknowledged at level 1", advance: time.Minute, entries: []Entry{q1}, marks: []Mark{ack(q1, 0, t0.Add(2*time.Minute)), ack(q1, 1, t0.Add(63*time.Minute))},
				want: []string{"acknowledged q1  1"}, inbox: []string{}},
		}},
		{name: "an ack recorded before this steward started is quiet from the first frame", cfg: Config{Reescalations: 2}, steps: []step{
			{advance: time.Minute, entries: []Entry{q1}, marks: []Mark{ack(q1, 0, t0)}, want: []string{}, inbox: []string{}},
			{advance: time.Hour, entries: []Entry{q1}, marks: []Mark{ack(q1, 0, t0)}, want: []string{"escalated q1 !1"}},
		}},
		{name: "snooze: back after its end, not before", cfg: Config{Reescalations: 2}, steps: []step{
			{advance: time.Minute, entries: []Entry{q1}, want: []string{"entered q1 !0"}},
			{advance: time.Minute, entries: []Entry{q1}, marks: []Mark{snooze(q1, t0.Add(2*time.Minute), t0.Add(2*time.Hour))}, want: []string{"snoozed q1  0"}, inbox: []string{}},
			{name: "the SLA passes while snoozed: quiet", advance: time.Hour, entries: []Entry{q1}, marks: []Mark{snooze(q1, t0.Add(2*time.Minute), t0.Add(2*time.Hour))}, want: []string{}, inbox: []string{}},
			{name: "the snooze ends: the level it reached is announced", advance: time.Hour, entries: []Entry{q1}, marks: []Mark{snooze(q1, t0.Add(2*time.Minute), t0.Add(2*time.Hour))}, want: []string{"escalated q1 !2"}, inbox: []string{"q1"}},
		}},
		{name: "snooze ending within the same level returns it once", cfg: Config{Reescalations: 2}, steps: []step{
			{advance: time.Minute, entries: []Entry{q1}, want: []string{"entered q1 !0"}},
			{advance: time.Minute, entries: []Entry{q1}, marks: []Mark{snooze(q1, t0.Add(2*time.Minute), t0.Add(10*time.Minute))}, want: []string{"snoozed q1  0"}},
			{advance: 10 * time.Minute, entries: []Entry{q1}, marks: []Mark{snooze(q1, t0.Add(2*time.Minute), t0.Add(10*time.Minute))}, want: []string{"returned q1 !0"}, inbox: []string{"q1"}},
			{advance: time.Minute, entries: []Entry{q1}, marks: []Mark{snooze(q1, t0.Add(2*time.Minute), t0.Add(10*time.Minute))}, want: []string{}},
		}},
		{name: "not while selected", cfg: Config{Reescalations: 2}, steps: []step{
			{name: "an entry appearing under the cursor is news all the same", advance: time.Minute, entries: []Entry{q1, q2}, selected: q1.Key, want: []string{"entered q1 !0", "entered q2 !0"}},
			{name: "its breach while selected is seen, not rung", advance: time.Hour, entries: []Entry{q1, q2}, selected: q1.Key, want: []string{"escalated q1  1", "escalated q2 !1"}},
			{name: "moving off it does not ring for what was seen", advance: time.Minute, entries: []Entry{q1, q2}, want: []string{}},
			{name: "a snooze ending on the selected row returns quietly", advance: time.Minute, entries: []Entry{q1, q2}, selected: q1.Key,
				marks: []Mark{snooze(q1, t0.Add(63*time.Minute), t0.Add(64*time.Minute))}, want: []string{"snoozed q1  1"}},
			{advance: time.Minute, entries: []Entry{q1, q2}, selected: q1.Key, marks: []Mark{snooze(q1, t0.Add(63*time.Minute), t0.Add(64*time.Minute))}, want: []string{"returned q1  1"}},
		}},
		{name: "operator entries and sources", cfg: Config{Reescalations: 2}, steps: []step{
			{name: "an orphan enters without a notification", advance: time.Minute, entries: []Entry{o}, want: []string{"entered o  0"}},
			{name: "the DB is lost: the orphan stays, the loss notifies", advance: time.Minute, entries: []Entry{dbDown}, unread: Unread{model.SourceDB: true},
				want: []string{"unavailable db !0"}, inbox: []string{"db", "o"}},
			{name: "the DB is back without the orphan: cleared, recovered", advance: time.Minute, entries: nil,
				want: []string{"cleared o  0", "recovered db  0"}, inbox: []string{}},
		}},
		{name: "a question is not cleared while Gitea is unread", cfg: Config{Reescalations: 2}, steps: []step{
			{advance: time.Minute, entries: []Entry{q1}, want: []string{"entered q1 !0"}},
			{advance: time.Minute, unread: Unread{model.SourceGitea: true}, want: []string{}, inbox: []string{"q1"}},
			{advance: time.Minute, want: []string{"cleared q1  0"}, inbox: []string{}},
		}},
		{name: "an entry without an evidence time ages from when it was first seen", cfg: Config{Reescalations: 0}, steps: []step{
			{advance: time.Minute, entries: []Entry{o}, want: []string{"entered o  0"}},
			{advance: 59 * time.Minute, entries: []Entry{o}, want: []string{}},
			{advance: time.Minute, entries: []Entry{o}, want: []string{"escalated o  1"}},
		}},
	}
}

func TestTracker(t *testing.T) {
	for _, tc := range trackerCases() {
		t.Run(tc.name, func(t *testing.T) {
			clk := &fakeClock{t: t0}
			tr := NewTracker(tc.cfg)
			for i, s := range tc.steps {
				now := clk.add(s.advance)
				got := render(tr.Observe(Frame{Now: now, Entries: s.entries, Unread: s.unread, Marks: s.marks, Selected: s.selected}))
				if strings.Join(got, ", ") != strings.Join(s.want, ", ") {
					t.Fatalf("step %d %q: events %q, want %q", i, s.name, got, s.want)
				}
				if s.inbox != nil {
					var keys []string
					for _, r := range tr.Inbox(now, false) {
						keys = append(keys, short(r.Entry.Key))
					}
					if strings.Join(keys, ",") != strings.Join(s.inbox, ",") {
						t.Fatalf("step %d %q: inbox %v, want %v", i, s.name, keys, s.inbox)
					}
				}
			}
		})
	}
}

func TestInboxOrder(t *testing.T) {
	tr := NewTracker(Config{Reescalations: 5})
	now := t0.Add(10 * time.Hour)
	late := question(1, t0)                     // 9h past a 1h SLA
	early := question(2, now.Add(-time.Minute)) // within
	mid := question(3, now.Add(-3*time.Hour))   // 2h past
	o := orphan("L1")
	o.Since = t0
	tr.Observe(Frame{Now: now, Entries: []Entry{o, early, mid, late}})
	var keys []string
	for _, r := range tr.Inbox(now, false) {
		keys = append(keys, short(r.Entry.Key))
		if r.Overdue != (r.Age >= r.Entry.SLA) {
			t.Errorf("%s: overdue %v at age %s", r.Entry.Key, r.Overdue, r.Age)
		}
	}
	if got := strings.Join(keys, ","); got != "q1,q3,q2,o" {
		t.Fatalf("inbox order %s: want human-required first, most overdue first", got)
	}
}

// TestTrackerRestartKeepsState replays every TestTracker scenario with the tracker replaced
// before each frame by a new one restored from the last one's State, through JSON (a
// steward restarted, its state kept by attention/store): the events are the same as one
// tracker's — nothing notified again, no SLA restarted — but for the acknowledged and
// snoozed events of marks recorded before the restart, which a new tracker honours
// silently. A tracker that is not restored fails it (entries enter again).
func TestTrackerRestartKeepsState(t *testing.T) {
	quiet := func(evs []string) []string {
		out := []string{}
		for _, e := range evs {
			if !strings.HasPrefix(e, "acknowledged ") && !strings.HasPrefix(e, "snoozed ") {
				out = append(out, e)
			}
		}
		return out
	}
	for _, tc := range trackerCases() {
		t.Run(tc.name, func(t *testing.T) {
			clk := &fakeClock{t: t0}
			one := NewTracker(tc.cfg)
			var st State
			for i, s := range tc.steps {
				now := clk.add(s.advance)
				f := Frame{Now: now, Entries: s.entries, Unread: s.unread, Marks: s.marks, Selected: s.selected}
				want := quiet(render(one.Observe(f)))
				b, err := json.Marshal(st)
				if err != nil {
					t.Fatal(err)
				}
				var back State
				if err := json.Unmarshal(b, &back); err != nil {
					t.Fatal(err)
				}
				re := NewTracker(tc.cfg)
				re.Restore(back)
				got := quiet(render(re.Observe(f)))
				if strings.Join(got, ", ") != strings.Join(want, ", ") {
					t.Fatalf("step %d %q after a restart: events %q, want %q (one tracker's)", i, s.name, got, want)
				}
				st = re.State()
			}
		})
	}
}
