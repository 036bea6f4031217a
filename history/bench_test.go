package history

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"steward/leases/leaserec"
)

// cpu returns the process's user+system CPU time: on a machine shared with other work the
// wall time of a benchmark measures the queue for a core, its CPU time the work.
func cpu() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU adds cpu-ms/op beside ns/op.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(cpu()-start)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
}

// synthetic is n events spread over 24 hours: claims, renewals, refusals and releases of
// sessions over items, every lease with its row (steward's DB shape).
func synthetic(n, items, sessions int) *Evidence {
	ev := &Evidence{Read: t0.Add(24 * time.Hour)}
	im := map[int64]Item{}
	for i := 1; i <= items; i++ {
		im[int64(i)] = it(int64(i))
	}
	step := 24 * time.Hour / time.Duration(n)
	var evs []leaserec.Event
	var ls []leaserec.Lease
	types := []string{"lease.claim", "lease.renew", "claim.refused", "lease.release"}
	for i := 0; i < n; i++ {
		at := t0.Add(time.Duration(i) * step)
		w := int64(i/4%items + 1)
		s := fmt.Sprintf("s%d", i/4%sessions)
		lease := fmt.Sprintf("L%d", i/4)
		typ := types[i%4]
		d := map[string]any{"lease_id": lease, "expires_at": at.Add(10 * time.Minute).Format(time.RFC3339)}
		if typ == "claim.refused" {
			d = map[string]any{"requesting_session_id": "r" + s, "holding_session_id": s, "reason": "claimed_by_other_session"}
		}
		evs = append(evs, leaserec.Event{EventID: int64(i + 1), WorkItemID: w, EventType: typ, Message: typ, SessionID: s,
			CreatedAt: leaserec.Timestamp{Time: at, State: leaserec.TimeRecorded}, Detail: d})
		if typ == "lease.claim" {
			ls = append(ls, leaserec.Lease{LeaseID: lease, SessionID: s, WorkItemID: w, Status: leaserec.StatusReleased,
				CreatedAt:  leaserec.Timestamp{Time: at, State: leaserec.TimeRecorded},
				ReleasedAt: leaserec.Timestamp{Time: at.Add(3 * step), State: leaserec.TimeRecorded},
				ExpiresAt:  leaserec.Timestamp{Time: at.Add(10 * time.Minute), State: leaserec.TimeRecorded}})
		}
	}
	ev.AddLeases(ls, im, leaserec.Health{Status: leaserec.HealthOK})
	ev.AddEvents(evs, EventsRead{Health: leaserec.Health{Status: leaserec.HealthOK}, FirstID: 1, NamesSessions: true, Items: im})
	return ev
}

// BenchmarkItemTimeline10k: one item's timeline out of 10,000 events all on that item
// (the case: an item timeline with 10,000 events), from added evidence to the
// filtered, ordered timeline.
func BenchmarkItemTimeline10k(b *testing.B) {
	evs := make([]*Evidence, b.N)
	for i := range evs {
		evs[i] = synthetic(10000, 1, 20)
	}
	b.ResetTimer()
	start := cpu()
	for i := 0; i < b.N; i++ {
		ev := evs[i]
		if tl := ev.Timeline(Filter{Item: it(1)}); len(tl.Entries) != 10000 {
			b.Fatal(len(tl.Entries))
		}
	}
	reportCPU(b, start)
}

// BenchmarkHeat24h10k: the heatmap over 24 hours of 10,000 claims (40,000 events) on 500
// items by 50 sessions.
func BenchmarkHeat24h10k(b *testing.B) {
	ev := synthetic(40000, 500, 50)
	ev.Finish()
	b.ResetTimer()
	start := cpu()
	for i := 0; i < b.N; i++ {
		if h := ev.Heat(t0, t0.Add(24*time.Hour)); len(h.Items) != 500 {
			b.Fatal(len(h.Items))
		}
	}
	reportCPU(b, start)
}

// BenchmarkAt24hBack10k: the fleet 24 hours back (at the first claim) of 10,000 claims.
func BenchmarkAt24hBack10k(b *testing.B) {
	ev := synthetic(40000, 500, 50)
	ev.Finish()
	b.ResetTimer()
	start := cpu()
	for i := 0; i < b.N; i++ {
		ev.At(t0.Add(time.Minute), 15*time.Minute)
	}
	reportCPU(b, start)
}
