package tui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"steward/govern/actionid"
	"steward/model"
)

// deadWorkers is a snapshot with two dead workers: sess-d1 holding acme/widgets#7 (its lease
// and its lock file, two orphans) and sess-d2 holding #8, #9 and #10 (six orphans), and a
// live worker's expired lease (an orphan of its own).
func deadWorkers() *model.Snapshot {
	s := &model.Snapshot{GeneratedAt: fixedNow.Add(-2 * time.Second), Sources: okSources()}
	exp := fixedNow.Add(-5 * time.Minute).Format(time.RFC3339)
	for _, w := range []struct {
		sess  string
		items []int64
	}{{"sess-d1", []int64{7}}, {"sess-d2", []int64{9, 8, 10}}} {
		for _, n := range w.items {
			lease, lock := fmt.Sprintf("L-%d", n), fmt.Sprintf("acme_widgets_%d.json", n)
			s.Orphans = append(s.Orphans,
				&model.Orphan{Kind: model.OrphanStaleLeaseDeadOwner, Item: item(n), LeaseID: lease, SessionID: w.sess,
					Evidence: []model.Evidence{{Source: model.SourceDB, Field: "owner", Value: "pid 4242 on \"bench\": dead"}},
					Action:   &model.ActionRef{ID: actionid.AbandonStale, Target: model.ActionTarget{LeaseID: lease}, Allowed: ptr(true)}},
				&model.Orphan{Kind: model.OrphanLiveLockDeadOwner, Item: item(n), LeaseID: lease, LockFile: lock, SessionID: w.sess,
					Evidence: []model.Evidence{{Source: model.SourceLocks, Field: "owner", Value: "pid 4242 on \"bench\": dead"}},
					Action:   &model.ActionRef{ID: actionid.RetireLock, Target: model.ActionTarget{LockFile: lock}, Allowed: ptr(true)}})
		}
	}
	s.Orphans = append(s.Orphans, &model.Orphan{Kind: model.OrphanActiveLeasePastExpiry, Item: item(20), LeaseID: "L-20", SessionID: "sess-live",
		Evidence: []model.Evidence{{Source: model.SourceDB, Field: "leases.expires_at", Value: exp}},
		Action:   &model.ActionRef{ID: actionid.ReclaimExpired, Target: model.ActionTarget{LeaseID: "L-20"}, Allowed: ptr(true)}})
	return s
}

// TestInboxOneRowPerDeadWorker: a dead worker is one row of the inbox in plain words — not a
// row per lease and lock file with the kinds' names — and several items it held group under
// it; the kinds stay in the detail. At 80×24 and 200×50 (goldens).
func TestInboxOneRowPerDeadWorker(t *testing.T) {
	for _, sz := range []struct {
		name string
		w, h int
	}{{"80x24", 80, 24}, {"200x50", 200, 50}} {
		t.Run(sz.name, func(t *testing.T) {
			r := newTestRoot(t, sz.w, sz.h, false)
			send(r, SnapshotMsg{deadWorkers()}, keyMsg("1"))
			requireGolden(t, r)
			rows := r.list().tbl.rows
			if len(rows) != 3 {
				t.Fatalf("%d inbox rows, want 3 (two dead workers, one orphan): %v", len(rows), titles(rows))
			}
			f := plain(r)
			if n := strings.Count(f, "worker sess-d1 d"); n != 1 { // at 80 columns the What cell is cut after it
				t.Errorf("sess-d1 on %d lines, want 1:\n%s", n, f)
			}
			if strings.Contains(f, "dead-owner") {
				t.Errorf("the inbox names an orphan kind:\n%s", f)
			}
			if sz.w >= 200 && (!strings.Contains(f, "acme/widgets#8 +2") || !strings.Contains(f, "worker sess-d2 died holding 3 items → recover each")) {
				t.Errorf("no grouped row for sess-d2:\n%s", f)
			}
		})
	}
}

func titles(rows []*row) []string {
	var out []string
	for _, r := range rows {
		out = append(out, r.Title)
	}
	return out
}

// TestIncidentRowActsOnTheWorker: the incident row's detail names its parts' kinds, c asks
// for the recover plan of its item, A acknowledges the incident — and A on one of its
// orphans in the Orphans view acknowledges the same incident.
func TestIncidentRowActsOnTheWorker(t *testing.T) {
	r := newTestRoot(t, 200, 50, false)
	send(r, SnapshotMsg{deadWorkers()}, keyMsg("1"))
	p := r.list()
	at := -1
	for i, ri := range p.tbl.view {
		if strings.HasPrefix(p.tbl.rows[ri].Title, "worker sess-d1 ") {
			at = i
		}
	}
	if at < 0 {
		t.Fatal("no row for sess-d1")
	}
	p.tbl.moveTo(at)
	send(r, keyMsg("enter"))
	f := plain(r)
	for _, want := range []string{"Incident: dead-worker", "stale-lease-dead-owner on acme/widgets#7", "live-lock-dead-owner on acme/widgets#7", "recover acme/widgets#7"} {
		if !strings.Contains(f, want) {
			t.Errorf("detail lacks %q:\n%s", want, f)
		}
	}
	send(r, keyMsg("esc"), keyMsg("c"))
	if f := plain(r); !strings.Contains(f, "item.recover") || !strings.Contains(f, "acme/widgets#7") {
		t.Errorf("c on the incident did not ask for the recover plan of acme/widgets#7:\n%s", f)
	}
	send(r, keyMsg("esc"), keyMsg("A"))
	if f := plain(r); !strings.Contains(f, "incident:dead-worker:sess-d1") {
		t.Errorf("A on the incident did not preview its acknowledgement:\n%s", f)
	}
	send(r, keyMsg("esc"), keyMsg("5"))
	if !r.list().tbl.selectKey(orphanKey(deadWorkers().Orphans[1])) {
		t.Fatal("the lock's orphan row is not in the Orphans view")
	}
	send(r, keyMsg("A"))
	if f := plain(r); !strings.Contains(f, "incident:dead-worker:sess-d1") {
		t.Errorf("A on a part of the incident did not preview the incident's acknowledgement:\n%s", f)
	}
}
