package tui

import (
	"strings"
	"testing"
	"time"

	"steward/attention"
)

// TestPulse: the header's pulse counts claims and refused claims of the
// last ten minutes per minute (over the shorter span the events cover, said so), new orphans
// once per orphaned thing and never the ones the first snapshot found with no time of their
// own, and the oldest human-required age.
func TestPulse(t *testing.T) {
	now := time.Date(2026, 12, 1, 21, 0, 0, 0, time.UTC)
	ev := func(kind string, ago time.Duration) event { return event{Kind: kind, At: now.Add(-ago)} }
	orphan := func(item, key string, since time.Duration, from attention.SinceFrom) attention.Event {
		return attention.Event{Type: attention.EventEntered, Entry: attention.Entry{Key: key, Kind: attention.KindOrphan, Item: item, Since: now.Add(-since), SinceFrom: from}}
	}
	cases := []struct {
		name   string
		events []event
		first  []attention.Event // the first snapshot's events
		later  []attention.Event
		oldest time.Duration // 0: no human-required entry
		want   string
	}{
		{name: "ten minutes of events", events: []event{ev("lease.claim", time.Minute), ev("lease.claim", 2*time.Minute), ev("lease.claim", 9*time.Minute),
			ev("lease.claim", 11*time.Minute), ev("claim.refused", 3*time.Minute), ev("claim.refused", 4*time.Minute), ev("lease.renew", time.Minute), ev("lease.release", 20*time.Minute)},
			want: "per min: 0.3 claims, 0.2 refused, 0.0 new orphans · oldest human-required —"},
		{name: "events cover four minutes: the rate is over those", events: []event{ev("lease.claim", time.Minute), ev("lease.claim", 2*time.Minute), ev("claim.refused", 4*time.Minute)},
			oldest: 3*time.Minute + 5*time.Second,
			want:   "per min (last 4m00s): 0.5 claims, 0.2 refused, 0.0 new orphans · oldest human-required 3m05s"},
		{name: "new orphans: once per thing, not the first snapshot's of unknown start",
			events: []event{ev("lease.renew", 20*time.Minute)},
			first: []attention.Event{
				orphan("acme/w#1", "orphan:live-lock-dead-owner:L1:a.json", 0, attention.SinceFirstSeen),           // there at start, began when? not counted
				orphan("acme/w#2", "orphan:active-lease-past-expiry:L2:", 2*time.Minute, attention.SinceEvidence),  // its expiry says: counted
				orphan("acme/w#3", "orphan:active-lease-past-expiry:L3:", 30*time.Minute, attention.SinceEvidence), // before the window
			},
			later: []attention.Event{
				orphan("acme/w#4", "orphan:stale-lease-dead-owner:L4:", 0, attention.SinceFirstSeen),
				orphan("acme/w#4", "orphan:live-lock-dead-owner:L4:d.json", 0, attention.SinceFirstSeen), // the same worker's lock: one orphan
				orphan("", "orphan:lock-without-lease::e.json", 0, attention.SinceFirstSeen),
			},
			want: "per min: 0.0 claims, 0.0 refused, 0.3 new orphans · oldest human-required —"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := newAttn(AttentionOptions{})
			a.sawAppear(c.first, now, true)
			a.sawAppear(c.later, now, false)
			if c.oldest > 0 {
				a.oldest = now.Add(-c.oldest)
			}
			if got := pulseOf(&data{Events: c.events}, a, now).line(200); got != c.want {
				t.Fatalf("got  %q\nwant %q", got, c.want)
			}
		})
	}
	// Narrower: fewer words, and at the least the oldest age.
	p := pulse{claims: 12, span: pulseWindow, oldest: time.Minute, ok: true}
	if got := p.line(60); !strings.HasPrefix(got, "/min: 1.2 claims") || len([]rune(got)) > 60 {
		t.Fatalf("at 60: %q", got)
	}
	if got := p.line(20); got != "oldest waiting 1m00s" {
		t.Fatalf("at 20: %q", got)
	}
	if got := p.line(12); got != "oldest 1m00s" {
		t.Fatalf("at 12: %q", got)
	}
	if got := p.line(5); got != "" {
		t.Fatalf("at 5: %q", got)
	}
}
