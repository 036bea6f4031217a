package leases_test

import (
	"reflect"
	"testing"
	"time"

	"steward/leases"
	"steward/leases/leaserec"
	"steward/leases/leasestest"
)

// rowsOf collects the leases a read hands over (ReadOptions.Leases).
type rowsOf struct {
	got      []leaserec.Lease
	restarts int
}

func (r *rowsOf) Lease(l leaserec.Lease) { r.got = append(r.got, l) }
func (r *rowsOf) Restart()               { r.got, r.restarts = nil, r.restarts+1 }

// TestSnapshotHandsLeasesOver: a read with ReadOptions.Leases hands over, one at a time,
// the leases a read without it returns (their Work filled), and returns the same sessions,
// sections and health otherwise — on a DB whose work items leave a lease unplaced (the
// health's degradation and note are the same), and on one with no work_items table.
func TestSnapshotHandsLeasesOver(t *testing.T) {
	t.Parallel()
	at := leaserec.FormatTime(now.Add(time.Minute))
	sessions := []leasestest.Session{{SessionID: "sess-a", Role: "author", PID: 10, Host: "h"},
		{SessionID: "sess-b", Role: "author", PID: 11, Host: "h"}}
	ls := []leasestest.Lease{
		{LeaseID: "l-active", SessionID: "sess-a", Work: leasestest.Work(leaserec.KindIssue, 1), ExpiresAt: at},
		{LeaseID: "l-orphan", SessionID: "sess-b", Work: leasestest.Work(leaserec.KindIssue, 3), ExpiresAt: at},
		{LeaseID: "l-done", SessionID: "sess-a", Work: leasestest.Work(leaserec.KindPR, 2),
			Status: leaserec.StatusReleased, ExpiresAt: leaserec.FormatTime(now)},
	}
	for _, c := range []struct {
		name  string
		stmts []string
	}{
		{"placed", nil},
		{"unplaced", []string{`DELETE FROM work_items WHERE work_number = 3`, `DELETE FROM work_items WHERE work_number = 2`}},
		{"no-work-items", []string{`DROP TABLE work_items`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := leasestest.NewDB(t, sessions, ls)
			exec(t, path, append([]string{"PRAGMA foreign_keys = OFF"}, c.stmts...)...)
			whole := snapshotOpt(t, path, leases.ReadOptions{})
			var rows rowsOf
			each := snapshotOpt(t, path, leases.ReadOptions{Leases: &rows})
			if rows.restarts == 0 || each.Leases != nil {
				t.Fatalf("restarts %d, leases kept %d", rows.restarts, len(each.Leases))
			}
			if len(whole.Leases) != 3 || !reflect.DeepEqual(rows.got, whole.Leases) {
				t.Fatalf("handed over:\n%+v\nread whole:\n%+v", rows.got, whole.Leases)
			}
			if c.name != "placed" && whole.LeasesHealth.Status != leaserec.HealthDegraded {
				t.Fatalf("health %+v: the case does not degrade the section", whole.LeasesHealth)
			}
			whole.Leases = nil
			if !reflect.DeepEqual(each, whole) {
				t.Fatalf("snapshot differs:\n%+v\n%+v", each, whole)
			}
		})
	}
}
