package live_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"steward/leases"
	"steward/leases/leaserec"
	"steward/model/live"
)

// BenchmarkDBCommitDuringResync: DB commits (a lease heartbeat, as a worker writes it)
// at random phases of a short resync period (1 s), on 10,000 leases (no lock files: the
// lock directory's listing is not measured here), each timed to the snapshot that shows
// it. After a scoped read every resync reads the DB in full; a commit that lands while the
// loop runs that read waits for it. held-% is the share of commits slower than 100 ms (the
// scoped read itself is a few ms plus the 20 ms debounce).
func BenchmarkDBCommitDuringResync(b *testing.B) {
	const n = 10000
	ws := benchWorkspace(b, n)
	ws.LocksDir = b.TempDir()
	l := live.New(ws, live.Options{Now: func() time.Time { return benchNow }, Resync: time.Second})
	if err := l.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	st, err := leases.OpenReadWrite(ws.DBPath, leases.StoreOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	fences := map[int64]leases.Fence{}
	var lat []time.Duration
	rounds := max(b.N, 60)
	rnd := rand.New(rand.NewPCG(1, 2))
	cpu0 := cpuTime()
	b.ResetTimer()
	held := 0
	for i := 0; i < rounds; i++ {
		k := int64(i%n + 1)
		f, ok := fences[k]
		if !ok {
			f = leases.Fence{LeaseID: fmt.Sprintf("lease-%d", k), Status: leaserec.StatusActive, SessionID: fmt.Sprintf("s%d", k),
				ExpiresAt: leaserec.FormatTime(benchNow.Add(time.Hour))}
		}
		time.Sleep(time.Duration(rnd.IntN(1000)) * time.Millisecond) // a random phase of the resync, not a synchronisation
		t0 := time.Now()
		out, err := st.Heartbeat(ctx, f, benchNow.Add(time.Duration(i+1)*time.Second))
		if err != nil || !out.OK() {
			b.Fatalf("heartbeat: %v %+v", err, out)
		}
		waitLeaseExpiry(b, l, k, out.Lease.ExpiresAt.Time)
		d := time.Since(t0)
		lat = append(lat, d)
		if d > 100*time.Millisecond {
			held++
		}
		fences[k] = leases.FenceOf(*out.Lease)
	}
	report(b, lat, cpuTime()-cpu0, rounds)
	b.ReportMetric(100*float64(held)/float64(rounds), "held-%")
}

// BenchmarkLockRenameDuringResync: lock renames (a heartbeat's rewrite: temp file, rename)
// at random phases of a short resync period (1 s), among 20,000 lock files (an empty DB),
// each timed to the snapshot that shows it. Every resync lists the directory and looks at
// each file; a rename that lands while the loop does that waits for it. held-% is the
// share of renames slower than 50 ms (the lock watcher's debounce is 10 ms).
func BenchmarkLockRenameDuringResync(b *testing.B) {
	const n = 20000
	ws := benchWorkspace(b, 0)
	for i := 1; i <= n; i++ {
		writeLock(b, ws.LocksDir, int64(i), benchNow.Add(time.Hour))
	}
	l := live.New(ws, live.Options{Now: func() time.Time { return benchNow }, Resync: time.Second})
	if err := l.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	var lat []time.Duration
	rounds := max(b.N, 60)
	rnd := rand.New(rand.NewPCG(1, 2))
	cpu0 := cpuTime()
	b.ResetTimer()
	held := 0
	for i := 0; i < rounds; i++ {
		k := int64(i%n + 1)
		exp := benchNow.Add(time.Hour + time.Duration(i+1)*time.Second)
		time.Sleep(time.Duration(rnd.IntN(1000)) * time.Millisecond) // a random phase of the resync, not a synchronisation
		t0 := time.Now()
		writeLock(b, ws.LocksDir, k, exp)
		waitClaim(b, l, k, exp)
		d := time.Since(t0)
		lat = append(lat, d)
		if d > 50*time.Millisecond {
			held++
		}
	}
	report(b, lat, cpuTime()-cpu0, rounds)
	b.ReportMetric(100*float64(held)/float64(rounds), "held-%")
}
