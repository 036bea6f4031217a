package leases_test

import (
	"context"
	"fmt"
	"testing"

	"steward/leases"
	"steward/leases/leaserec"
	"steward/leases/leasestest"
)

// A catch-up read keeps the last events and every claim refusal, skips the rest, and
// returns the cursor past all of them.
func TestEventsBacklog(t *testing.T) {
	t.Parallel()
	path := leasestest.NewDB(t, nil, nil)
	var stmts []string
	for i := 1; i <= 60; i++ {
		typ := "lease.renew"
		if i%10 == 3 { // 3, 13, …, 53
			typ = "claim.refused"
		}
		stmts = append(stmts, fmt.Sprintf(`INSERT INTO events(event_id, work_item_id, event_type, message, created_at) VALUES(%d, 1, '%s', 'm', '2026-11-30T08:00:00.000000Z')`, i, typ))
	}
	exec(t, path, stmts...)
	r, err := leases.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ids := func(evs []leaserec.Event) []int64 {
		var out []int64
		for _, e := range evs {
			out = append(out, e.EventID)
		}
		return out
	}
	for _, tc := range []struct {
		cursor int64
		last   int
		want   []int64
		next   int64
	}{
		{0, 5, []int64{3, 13, 23, 33, 43, 53, 56, 57, 58, 59, 60}, 60},
		{30, 2, []int64{33, 43, 53, 59, 60}, 60},
		{55, 100, []int64{56, 57, 58, 59, 60}, 60},
		{60, 5, nil, 60},
		{0, 0, []int64{3, 13, 23, 33, 43, 53}, 60},
	} {
		evs, h, next, err := r.EventsBacklog(context.Background(), tc.cursor, tc.last)
		if err != nil || h.Status != leaserec.HealthOK {
			t.Fatalf("cursor %d: %v %+v", tc.cursor, err, h)
		}
		if got := ids(evs); fmt.Sprint(got) != fmt.Sprint(tc.want) || next != tc.next {
			t.Errorf("cursor %d last %d: %v next %d, want %v next %d", tc.cursor, tc.last, got, next, tc.want, tc.next)
		}
	}
}
