package history

import (
	"testing"
	"time"

	"steward/leases/leaserec"
)

// TestLeaseRowsJoinTheEvents: a lease row gives its claim, last heartbeat and end as
// entries with its session; an event that records the same step of the same lease —
// naming it (steward's events), or on the seed's schema, which names no lease, the same
// item within a second — is the same fact, so the timeline holds it once (the event's).
// A step only the row records stays.
func TestLeaseRowsJoinTheEvents(t *testing.T) {
	m := time.Minute
	row := leaserec.Lease{LeaseID: "L1", WorkItemID: 7, SessionID: "prgs-author-1", Role: "author", Status: leaserec.StatusReleased,
		CreatedAt: leaserec.ParseTimestamp(leaserec.FormatTime(t0)), LastHeartbeatAt: leaserec.ParseTimestamp(leaserec.FormatTime(t0.Add(4 * m))),
		HeartbeatCount: 3, ReleasedAt: leaserec.ParseTimestamp(leaserec.FormatTime(t0.Add(9 * m)))}
	items := map[int64]Item{7: it(7)}
	ok := leaserec.Health{Status: leaserec.HealthOK}
	for _, c := range []struct {
		name   string
		events []leaserec.Event
		want   map[Source]int
	}{
		{"no events", nil, map[Source]int{SourceLeases: 3}},
		{"steward's events name the lease", []leaserec.Event{
			{EventID: 1, WorkItemID: 7, EventType: "lease.claim", CreatedAt: leaserec.ParseTimestamp(leaserec.FormatTime(t0)), Detail: map[string]any{"lease_id": "L1"}},
			{EventID: 2, WorkItemID: 7, EventType: "lease.release", CreatedAt: leaserec.ParseTimestamp(leaserec.FormatTime(t0.Add(9 * m))), Detail: map[string]any{"lease_id": "L1"}},
		}, map[Source]int{SourceEvents: 2, SourceLeases: 1}},
		{"the seed's events name the item", []leaserec.Event{
			{EventID: 1, WorkItemID: 7, EventType: "lease.renew", Message: "lease renewed", CreatedAt: leaserec.ParseTimestamp(leaserec.FormatTime(t0.Add(4*m + 500*time.Millisecond)))},
			{EventID: 2, WorkItemID: 7, EventType: "lease.renew", Message: "lease renewed", CreatedAt: leaserec.ParseTimestamp(leaserec.FormatTime(t0.Add(2 * m)))},
		}, map[Source]int{SourceEvents: 2, SourceLeases: 2}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ev := &Evidence{Read: t0.Add(time.Hour)}
			ev.AddLeases([]leaserec.Lease{row}, items, ok)
			ev.AddEvents(c.events, EventsRead{Health: ok, FirstID: 1, Items: items})
			tl := ev.Timeline(Filter{Item: it(7)})
			got := map[Source]int{}
			for _, en := range tl.Entries {
				got[en.Source]++
				if en.Source == SourceLeases && en.Session != "prgs-author-1" {
					t.Errorf("row entry without its session: %+v", en)
				}
			}
			if len(got) != len(c.want) || got[SourceEvents] != c.want[SourceEvents] || got[SourceLeases] != c.want[SourceLeases] {
				t.Fatalf("entries by source %v, want %v: %+v", got, c.want, tl.Entries)
			}
			if s := ev.Timeline(Filter{Session: "prgs-author-1"}); len(s.Entries) < c.want[SourceLeases] {
				t.Fatalf("the session's timeline: %+v", s.Entries)
			}
		})
	}
}
