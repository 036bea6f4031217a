package leases_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"steward/leases"
	"steward/leases/leaserec"
	"steward/leases/leasestest"
)

// TestConcurrentClaims: 32 goroutines over two independent read-write
// handles claim the same item at once, 100 rounds. Every round must end
// with exactly one active lease and 31 claim.refused events, and no
// SQLITE_BUSY may escape as an error or a busy outcome.
func TestConcurrentClaims(t *testing.T) {
	const workers, rounds = 32, 100
	path := leasestest.NewDB(t, nil, nil)
	var stores [2]leases.Store
	for i := range stores {
		s, err := leases.OpenReadWrite(path, leases.StoreOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		stores[i] = s
	}
	r, err := leases.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx := context.Background()
	start := time.Now()
	var cursor int64
	for round := 0; round < rounds; round++ {
		at := now.Add(time.Duration(round) * time.Minute)
		outs := make([]leases.Outcome, workers)
		errs := make([]error, workers)
		var wg sync.WaitGroup
		gate := make(chan struct{})
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				<-gate
				outs[w], errs[w] = stores[w%2].Claim(ctx, claimReq(fmt.Sprintf("sess-%02d", w), 1), at)
			}(w)
		}
		close(gate)
		wg.Wait()
		var winner *leaserec.Lease
		refused := 0
		for w := 0; w < workers; w++ {
			switch {
			case errs[w] != nil:
				t.Fatalf("round %d worker %d: error %v", round, w, errs[w])
			case outs[w].OK():
				if winner != nil {
					t.Fatalf("round %d: two winners", round)
				}
				winner = outs[w].Lease
			case outs[w].Code == leases.CodeClaimedByOtherSession:
				refused++
			default:
				t.Fatalf("round %d worker %d: outcome %+v", round, w, outs[w])
			}
		}
		if winner == nil || refused != workers-1 {
			t.Fatalf("round %d: winner %v refused %d", round, winner != nil, refused)
		}
		live, err := r.LeasesForWorkItem(ctx, leasestest.Work(leaserec.KindIssue, 1))
		if err != nil || len(live) != 1 || live[0].LeaseID != winner.LeaseID {
			t.Fatalf("round %d: live leases %+v %v", round, live, err)
		}
		ev, _, err := r.EventsSince(ctx, cursor, 0)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, e := range ev {
			if e.EventType == "claim.refused" {
				n++
				if e.Detail["holding_session_id"] != winner.SessionID {
					t.Fatalf("round %d: refused event names holder %v, want %s", round, e.Detail["holding_session_id"], winner.SessionID)
				}
			}
		}
		if n != workers-1 {
			t.Fatalf("round %d: %d claim.refused events", round, n)
		}
		cursor = ev[len(ev)-1].EventID
		if out, err := stores[round%2].Release(ctx, leases.FenceOf(*winner), "round over", at); err != nil || !out.OK() {
			t.Fatalf("round %d release: %+v %v", round, out, err)
		}
	}
	t.Logf("%d rounds x %d claimers in %v", rounds, workers, time.Since(start))
}
