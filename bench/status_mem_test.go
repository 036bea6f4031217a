package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strconv"
	"testing"
	"time"

	"steward/bench/internal/fleet"
	"steward/bench/internal/phase"
	"steward/cli"
)

// BenchmarkStatusJSONPerClaim runs `steward status --json --no-gitea` through cli.Main (the
// code the binary runs) on generated fleets of 1,000 and 10,000 claims and reports its memory
// per claim: bytes allocated (alloc-B/claim) and the largest heap sampled every millisecond
// while it ran (peak-heap-B/claim, of which the fleet's own share is what grows). Neither
// depends on the machine's load. Growth is at most linear when both stay flat from 1,000 to
// 10,000 claims. STEWARD_BENCH_SIZES (comma-separated) measures other sizes.
func BenchmarkStatusJSONPerClaim(b *testing.B) {
	sizes := []int{1000, 10000}
	if v := os.Getenv("STEWARD_BENCH_SIZES"); v != "" {
		sizes = nil
		for _, f := range bytes.Split([]byte(v), []byte(",")) {
			n, err := strconv.Atoi(string(f))
			if err != nil {
				b.Fatal(err)
			}
			sizes = append(sizes, n)
		}
	}
	for _, n := range sizes {
		b.Run(fmt.Sprintf("claims=%d", n), func(b *testing.B) {
			dir := b.TempDir()
			m, err := fleet.Generate(filepath.Join(dir, "ws"), n)
			if err != nil {
				b.Fatal(err)
			}
			home := filepath.Join(dir, "xdg")
			if err := os.MkdirAll(home, 0o700); err != nil {
				b.Fatal(err)
			}
			b.Setenv("XDG_CONFIG_HOME", home)
			b.Setenv("STEWARD_CONFIG", "")
			args := []string{"status", "--json", "--no-gitea", "--locks", m.LocksDir, "--db", m.DBPath, "--repo-root", m.RepoRoot,
				"--audit", m.AuditPath, "--now", m.Base.UTC().Format(time.RFC3339)}
			out := filepath.Join(dir, "status.json")
			var peak, allocs, bytesAlloc uint64
			runtime.GC()
			var base runtime.MemStats
			runtime.ReadMemStats(&base)
			b.ResetTimer()
			for range b.N {
				f, err := os.Create(out)
				if err != nil {
					b.Fatal(err)
				}
				var before runtime.MemStats
				runtime.ReadMemStats(&before)
				stop, done := make(chan struct{}), make(chan uint64)
				go func() { done <- sampleHeap(stop) }()
				var stderr bytes.Buffer
				code := cli.Main(args, f, &stderr)
				close(stop)
				p := <-done
				var after runtime.MemStats
				runtime.ReadMemStats(&after)
				f.Close()
				if code != 0 {
					b.Fatalf("status exited %d: %s", code, stderr.Bytes())
				}
				peak = max(peak, p)
				allocs += after.Mallocs - before.Mallocs
				bytesAlloc += after.TotalAlloc - before.TotalAlloc
			}
			b.StopTimer()
			claims, _, err := phase.CountStatusClaims(dir)
			if err != nil || claims != n {
				b.Fatalf("the output lists %d claims of %d (%v)", claims, n, err)
			}
			per := func(v uint64) float64 { return float64(v) / float64(b.N) / float64(n) }
			b.ReportMetric(per(bytesAlloc), "alloc-B/claim")
			b.ReportMetric(per(allocs), "allocs/claim")
			b.ReportMetric(float64(peak-min(peak, base.HeapAlloc))/float64(n), "peak-heap-B/claim")
			b.ReportMetric(float64(peak)/1e6, "peak-heap-MB")
		})
	}
}

// sampleHeap returns the largest heap of objects seen every millisecond until stop is closed.
func sampleHeap(stop <-chan struct{}) uint64 {
	var peak uint64
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	t := time.NewTicker(time.Millisecond)
	defer t.Stop()
	for {
		metrics.Read(s) // no stop of the world, unlike runtime.ReadMemStats
		peak = max(peak, s[0].Value.Uint64())
		select {
		case <-stop:
			return peak
		case <-t.C:
		}
	}
}
