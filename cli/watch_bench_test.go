package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"steward/govern"
)

// BenchmarkWatchLatency measures how soon `steward watch --json` (a real process on a real
// workspace, without the periodic resync) reports a change. Each iteration commits an
// expired lease and times its orphan's `entered`, then removes the DB and times its
// `unavailable`, and makes the DB again (awaiting `recovered`) for the next. It reports the
// mean and the worst of each in milliseconds, with the machine's load (docs/attention.md):
//
//	go test -run '^$' -bench BenchmarkWatchLatency -benchtime 10x ./cli/
func BenchmarkWatchLatency(b *testing.B) {
	ws := watchWorkspace(b)
	w := startWatch(b, false, []string{"--tick", "200ms", "--locks", ws.LocksDir, "--db", ws.DBPath,
		"--repo-root", ws.RepoRoot, "--audit", filepath.Join(filepath.Dir(ws.LocksDir), "audit.jsonl")})
	w.await("watching", func(e watchEvent) bool { return e.Event == "watching" })
	var entered, lost []time.Duration
	b.ResetTimer()
	for i := range b.N {
		key := fmt.Sprintf("orphan:active-lease-past-expiry:L%d", i+1)
		start := time.Now()
		expiredLease(b, ws, fmt.Sprintf("L%d", i+1), int64(i+1))
		e := w.await(key, func(e watchEvent) bool { return e.Event == "entered" && e.Entry.Key == key })
		entered = append(entered, e.at.Sub(start))

		start = time.Now()
		removeDB(b, ws)
		u := w.await("unavailable db", func(e watchEvent) bool { return e.Event == "unavailable" && e.Entry.Key == "source:db" })
		lost = append(lost, u.at.Sub(start))

		b.StopTimer()
		if err := govern.InitWorkspace(ws); err != nil {
			b.Fatal(err)
		}
		w.await("recovered db", func(e watchEvent) bool { return e.Event == "recovered" && e.Entry.Key == "source:db" })
		b.StartTimer()
	}
	b.StopTimer()
	w.stop()
	ms := func(ds []time.Duration) (mean, worst float64) {
		var sum time.Duration
		for _, d := range ds {
			sum += d
		}
		return float64(sum.Milliseconds()) / float64(len(ds)), float64(slices.Max(ds).Milliseconds())
	}
	mean, worst := ms(entered)
	b.ReportMetric(mean, "entered-ms")
	b.ReportMetric(worst, "entered-worst-ms")
	mean, worst = ms(lost)
	b.ReportMetric(mean, "unavailable-ms")
	b.ReportMetric(worst, "unavailable-worst-ms")
	if load, err := os.ReadFile("/proc/loadavg"); err == nil {
		b.Logf("load average %s", strings.Join(strings.Fields(string(load))[:3], " "))
	}
}
