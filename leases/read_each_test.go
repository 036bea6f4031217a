package leases_test

import (
	"fmt"
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

// TestSnapshotSaysWhichLeasesLackTheirItem: a lease not ended whose work item is missing
// degrades the leases section, an ended one only adds a note, each counted and said in
// words that agree with the count; with the work_items table unreadable the section is
// degraded only when it holds a lease — read whole and streamed alike.
func TestSnapshotSaysWhichLeasesLackTheirItem(t *testing.T) {
	t.Parallel()
	at := leaserec.FormatTime(now.Add(time.Minute))
	sessions := []leasestest.Session{{SessionID: "sess-a", Role: "author", PID: 10, Host: "h"}}
	lease := func(id string, n int64, st leaserec.Status) leasestest.Lease {
		l := leasestest.Lease{LeaseID: id, SessionID: "sess-a", Work: leasestest.Work(leaserec.KindIssue, n), ExpiresAt: at,
			Status: st}
		if st != "" {
			l.ExpiresAt = leaserec.FormatTime(now)
		}
		return l
	}
	for _, c := range []struct {
		name           string
		ls             []leasestest.Lease
		stmts          []string
		status         leaserec.HealthStatus
		reasons, notes []string
	}{
		{"all placed", []leasestest.Lease{lease("l-1", 1, ""), lease("l-2", 2, leaserec.StatusReleased)}, nil,
			leaserec.HealthOK, nil, nil},
		{"one of each missing",
			[]leasestest.Lease{lease("l-1", 1, ""), lease("l-3", 3, ""), lease("l-2", 2, leaserec.StatusReleased)},
			[]string{`DELETE FROM work_items WHERE work_number IN (2, 3)`}, leaserec.HealthDegraded,
			[]string{"1 lease not ended references a missing work item"},
			[]string{"1 ended lease references a missing work item"}},
		{"only ended missing",
			[]leasestest.Lease{lease("l-1", 1, ""), lease("l-2", 2, leaserec.StatusReleased),
				lease("l-4", 4, leaserec.StatusExpired)},
			[]string{`DELETE FROM work_items WHERE work_number IN (2, 4)`}, leaserec.HealthOK, nil,
			[]string{"2 ended leases reference a missing work item"}},
		{"two not ended missing", []leasestest.Lease{lease("l-3", 3, ""), lease("l-5", 5, "")},
			[]string{`DELETE FROM work_items`}, leaserec.HealthDegraded,
			[]string{"2 leases not ended reference a missing work item"}, nil},
		{"no work_items, a lease", []leasestest.Lease{lease("l-1", 1, "")}, []string{`DROP TABLE work_items`},
			leaserec.HealthDegraded, []string{"work_items unreadable: leases have no issue/PR scope"}, nil},
		{"no work_items, no lease", nil, []string{`DROP TABLE work_items`}, leaserec.HealthOK, nil, nil},
	} {
		path := leasestest.NewDB(t, sessions, c.ls)
		exec(t, path, append([]string{"PRAGMA foreign_keys = OFF"}, c.stmts...)...)
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stream=%v", c.name, stream), func(t *testing.T) {
				var opt leases.ReadOptions
				if stream {
					opt.Leases = &rowsOf{}
				}
				h := snapshotOpt(t, path, opt).LeasesHealth
				if h.Status != c.status || !reflect.DeepEqual(h.Reasons, c.reasons) || !reflect.DeepEqual(h.Notes, c.notes) {
					t.Fatalf("health %q, reasons %q, notes %q; want %q, %q, %q",
						h.Status, h.Reasons, h.Notes, c.status, c.reasons, c.notes)
				}
			})
		}
	}
}
