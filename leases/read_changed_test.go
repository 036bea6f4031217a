package leases_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"steward/leases"
	"steward/leases/leaserec"
	"steward/leases/leasestest"
)

func TestReadScope(t *testing.T) {
	exp := leaserec.FormatTime(leasestest.Now.Add(10 * time.Minute))
	path := leasestest.NewDB(t, []leasestest.Session{{SessionID: "s1", Host: "h"}, {SessionID: "s2"}, {SessionID: "s3"}},
		[]leasestest.Lease{
			{LeaseID: "lease-1", SessionID: "s1", Work: leasestest.Work(leaserec.KindIssue, 1), ExpiresAt: exp},
			{LeaseID: "lease-2", SessionID: "s2", Work: leasestest.Work(leaserec.KindIssue, 1), ExpiresAt: exp, Status: leaserec.StatusReleased},
			{LeaseID: "lease-3", SessionID: "s3", Work: leasestest.Work(leaserec.KindIssue, 2), ExpiresAt: exp},
		})
	r, err := leases.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx := context.Background()
	l1, _, err := r.LeaseByID(ctx, "lease-1")
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.ReadScope(ctx, leases.Scope{WorkItemIDs: []int64{l1.WorkItemID}, LeaseIDs: []string{"lease-2", "lease-gone"},
		SessionIDs: []string{"s-gone"}})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, l := range got.Leases {
		ids = append(ids, l.LeaseID)
		if l.Work != leasestest.Work(leaserec.KindIssue, 1) {
			t.Errorf("%s: Work = %+v", l.LeaseID, l.Work)
		}
	}
	// lease-1: active on the item; lease-2: named (ended); lease-3: another item.
	if !slices.Equal(ids, []string{"lease-1", "lease-2"}) {
		t.Errorf("leases = %v", ids)
	}
	if !slices.Equal(got.SessionIDs, []string{"s-gone", "s1", "s2"}) {
		t.Errorf("session ids asked = %v", got.SessionIDs)
	}
	var sess []string
	for _, s := range got.Sessions {
		sess = append(sess, s.SessionID)
	}
	slices.Sort(sess)
	if !slices.Equal(sess, []string{"s1", "s2"}) {
		t.Errorf("sessions = %v", sess)
	}
	if len(got.WorkItems) != 1 || got.WorkItems[0].WorkItemID != l1.WorkItemID {
		t.Errorf("work items = %+v", got.WorkItems)
	}
	for name, h := range map[string]leaserec.Health{"leases": got.LeasesHealth, "sessions": got.SessionsHealth, "work items": got.WorkItemsHealth} {
		if h.Status != leaserec.HealthOK || len(h.Notes) != 0 {
			t.Errorf("%s health = %+v", name, h)
		}
	}
	// A row of the scope with a value that cannot be decoded is read, with a note that
	// counts such rows.
	exec(t, path, `UPDATE leases SET expires_at = 'not a time' WHERE lease_id = 'lease-1'`)
	bad, err := r.ReadScope(ctx, leases.Scope{WorkItemIDs: []int64{l1.WorkItemID}, LeaseIDs: []string{"lease-2"}})
	if err != nil || len(bad.Leases) != 2 || bad.LeasesHealth.Status != leaserec.HealthOK ||
		!slices.Equal(bad.LeasesHealth.Notes, []string{"1 leases row with undecodable values (see each row's Problems)"}) {
		t.Errorf("scope with an undecodable row: %d leases, health %+v, %v", len(bad.Leases), bad.LeasesHealth, err)
	}

	empty, err := r.ReadScope(ctx, leases.Scope{})
	if err != nil || len(empty.Leases)+len(empty.Sessions)+len(empty.WorkItems) != 0 || empty.LeasesHealth.Status != leaserec.HealthOK {
		t.Errorf("empty scope = %+v, %v", empty, err)
	}
}

// A missing table degrades or disables its section; it never fails the read
// and never reads as "no rows" with an ok health.
func TestReadScopeMissingTable(t *testing.T) {
	path := leasestest.NewDB(t, []leasestest.Session{{SessionID: "s1"}},
		[]leasestest.Lease{{LeaseID: "lease-1", SessionID: "s1", Work: leasestest.Work(leaserec.KindIssue, 1)}})
	exec(t, path, `DROP TABLE sessions`)
	r, err := leases.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got, err := r.ReadScope(context.Background(), leases.Scope{LeaseIDs: []string{"lease-1"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Leases) != 1 || got.SessionsHealth.Status != leaserec.HealthUnavailable {
		t.Errorf("leases %d, sessions health %+v", len(got.Leases), got.SessionsHealth)
	}
}

// BenchmarkReadScope reads the scope of one commit (one work item, its lease,
// its session) at 100 and 10,000 leases in one run: the cost must not follow
// the table size.
func BenchmarkReadScope(b *testing.B) {
	for _, n := range []int{100, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			r, err := leases.OpenReadOnly(benchDB(b, n))
			if err != nil {
				b.Fatal(err)
			}
			defer r.Close()
			ctx := context.Background()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				k := int64(i%n + 1)
				s, err := r.ReadScope(ctx, leases.Scope{WorkItemIDs: []int64{k}, LeaseIDs: []string{fmt.Sprintf("lease-%08x", k)}})
				if err != nil || len(s.Leases) != 1 || len(s.Sessions) != 1 {
					b.Fatalf("scope: %v %+v", err, s)
				}
			}
		})
	}
}
