package main

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"steward/bench/internal/fleet"
	"steward/history/gather"
	"steward/leases"
	"steward/model"
	"steward/model/live"
)

// BenchmarkStatusAtAgainstNow measures, interleaved in one run on one workspace of 10,000
// claims (bench/internal/fleet: rows, claim events, lock files), a current status — the
// live model's load and build, what `steward status` does before printing — against the
// fleet reconstructed 24 hours back (`steward status --at 24h`: every event, every lease
// row, the lock directory with retired/ and the audit log read, then At). It reports their
// ratio; the target is at most 3 (reading the past may cost three times reading the present).
func BenchmarkStatusAtAgainstNow(b *testing.B) {
	m, err := fleet.Generate(filepath.Join(b.TempDir(), "ws"), 10000)
	if err != nil {
		b.Fatal(err)
	}
	ws := live.Workspace{LocksDir: m.LocksDir, DBPath: m.DBPath, RepoRoot: m.RepoRoot}
	src := gather.Sources{LocksDir: m.LocksDir, DB: leases.Target{Loc: m.DBPath}, AuditPath: m.AuditPath}
	now := func() time.Time { return m.Base }
	ctx := context.Background()
	var cur, past time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		s := model.Build(live.Load(ctx, ws, live.NewProbe(ws.RepoRoot), m.Base), model.Config{}, m.Base)
		cur += time.Since(t0)
		t1 := time.Now()
		fl := gather.Read(ctx, src, gather.Options{Now: now}).At(m.Base.Add(-24*time.Hour), 15*time.Minute)
		past += time.Since(t1)
		if len(s.Claims) != 10000 || len(fl.Claims) != 0 {
			b.Fatalf("now %d claims, 24 h back %d", len(s.Claims), len(fl.Claims))
		}
	}
	b.ReportMetric(float64(cur.Milliseconds())/float64(b.N), "status-ms/op")
	b.ReportMetric(float64(past.Milliseconds())/float64(b.N), "status-at-ms/op")
	b.ReportMetric(float64(past)/float64(cur), "at/now")
}
