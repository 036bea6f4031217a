package contract_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"steward/leases"
	"steward/leases/contract"
	"steward/leases/leaserec"
	"steward/leases/leasestest"
	"steward/leases/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// TestSQLite runs the contract against the embedded backend.
func TestSQLite(t *testing.T) { contract.Run(t, contract.SQLite()) }

// TestPostgres runs the contract against a real PostgreSQL server started by the test.
func TestPostgres(t *testing.T) { contract.Run(t, contract.Postgres()) }

// BenchmarkClaimsAndHeartbeats: 1,000 simulated workers, each claiming its own item,
// heartbeating it twice and releasing it, 16 at a time, on each backend in the same run
// (a fresh database each). One iteration is one such round of the whole fleet; the
// metric ops/s counts claims and heartbeats. docs/performance.md has the measured ratio.
func BenchmarkClaimsAndHeartbeats(b *testing.B) {
	const workers, parallel = 1000, 16
	for _, be := range contract.Backends() {
		b.Run(be.Name, func(b *testing.B) {
			e := be.New(b, false)
			s := e.Store(leases.StoreOptions{})
			ctx := context.Background()
			ops := 0
			start := time.Now()
			for b.Loop() {
				now := e.Now()
				var wg sync.WaitGroup
				errs := make(chan error, parallel)
				for p := range parallel {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for w := p; w < workers; w += parallel {
							if err := workerCycle(ctx, s, w, now); err != nil {
								errs <- err
								return
							}
						}
					}()
				}
				wg.Wait()
				close(errs)
				for err := range errs {
					b.Fatal(err)
				}
				ops += workers * 3
			}
			b.ReportMetric(float64(ops)/time.Since(start).Seconds(), "ops/s")
		})
	}
}

// workerCycle is one simulated worker's claim, two heartbeats and release; any outcome
// but ok is an error.
func workerCycle(ctx context.Context, s leases.Store, w int, now time.Time) error {
	session := fmt.Sprintf("bench-%04d", w)
	out, err := s.Claim(ctx, leases.ClaimRequest{
		Session:   leases.SessionInfo{SessionID: session, Role: "author", PID: 42, Host: "h1"},
		Work:      leasestest.Work(leaserec.KindIssue, int64(w+1)),
		TaskClass: leaserec.ClassAuthorIssueWork, WorktreePath: "/w/" + session, OwnerHost: "h1",
	}, now)
	for i := 0; err == nil && out.OK() && i < 2; i++ {
		out, err = s.Heartbeat(ctx, leases.FenceOf(*out.Lease), now)
	}
	if err == nil && out.OK() {
		out, err = s.Release(ctx, leases.FenceOf(*out.Lease), "bench", now)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", session, err)
	}
	if !out.OK() {
		return fmt.Errorf("%s: %s: %s", session, out.Code, out.Message)
	}
	return nil
}
