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

// TestSnapshotBoundsEndedSessions: a read holds every session that may be live, every one
// a lease read names, and the most recent others; it counts what it left out — read whole
// and streamed.
func TestSnapshotBoundsEndedSessions(t *testing.T) {
	t.Parallel()
	ss := []leasestest.Session{
		{SessionID: "old-ended-named", Status: "ended"},  // an active lease names it (an orphan lease)
		{SessionID: "old-ended", Status: "ended"},        // only a terminal lease names it: left out
		{SessionID: "old-live", Status: "active"},        // may be live: kept
		{SessionID: "old-upper", Status: "ACTIVE"},       // may be live to a reader that folds case: kept
		{SessionID: "old-crashed", Status: "crashed"},    // left out
		{SessionID: "recent-ended-1", Status: "ended"},   // among the 2 most recent
		{SessionID: "recent-ended-2", Status: "expired"}, // among the 2 most recent
	}
	ls := []leasestest.Lease{
		{LeaseID: "l-held", SessionID: "old-ended-named", Work: leasestest.Work(leaserec.KindIssue, 1), ExpiresAt: leaserec.FormatTime(now.Add(time.Hour))},
		// A terminal lease keeps no session in the read: its session's row decides nothing.
		{LeaseID: "l-done", SessionID: "old-ended", Work: leasestest.Work(leaserec.KindIssue, 2),
			Status: leaserec.StatusReleased, ExpiresAt: leaserec.FormatTime(now.Add(-time.Hour))}}
	path := leasestest.NewDB(t, ss, ls)
	ids := func(s *leases.Snapshot) []string {
		var out []string
		for _, x := range s.Sessions {
			out = append(out, x.SessionID)
		}
		return out
	}
	for _, tc := range []struct {
		name    string
		opt     leases.ReadOptions
		want    []string
		omitted int
	}{
		{"two recent", leases.ReadOptions{RecentEnded: 2}, []string{"old-ended-named", "old-live", "old-upper", "recent-ended-1", "recent-ended-2"}, 2},
		{"no recent", leases.ReadOptions{RecentEnded: -1}, []string{"old-ended-named", "old-live", "old-upper"}, 4},
		{"default covers all", leases.ReadOptions{}, []string{"old-ended-named", "old-ended", "old-live", "old-upper", "old-crashed", "recent-ended-1", "recent-ended-2"}, 0},
		{"terminal leases not read", leases.ReadOptions{RecentEnded: -1, RecentTerminal: -1}, []string{"old-ended-named", "old-live", "old-upper"}, 4},
	} {
		// Read whole, and with the leases handed over one at a time (ReadOptions.Leases: the
		// sessions they name are gathered as they stream).
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stream=%v", tc.name, stream), func(t *testing.T) {
				opt := tc.opt
				if stream {
					opt.Leases = &rowsOf{}
				}
				s := snapshotOpt(t, path, opt)
				if got := ids(s); !slices.Equal(got, tc.want) || s.SessionsOmitted != tc.omitted {
					t.Fatalf("sessions %v omitted %d, want %v omitted %d", got, s.SessionsOmitted, tc.want, tc.omitted)
				}
				if s.SessionsHealth.Status != leaserec.HealthOK {
					t.Fatalf("health %+v", s.SessionsHealth)
				}
			})
		}
	}
	// Without a status column nothing can be told ended: every row is read.
	exec(t, path, `ALTER TABLE sessions DROP COLUMN status`)
	s := snapshotOpt(t, path, leases.ReadOptions{RecentEnded: -1})
	if len(s.Sessions) != len(ss) || s.SessionsOmitted != 0 {
		t.Fatalf("no status column: %d sessions, %d omitted", len(s.Sessions), s.SessionsOmitted)
	}
}

// TestSnapshotKeepsTheMostRecentByCreation: the recent ended sessions and terminal leases a
// read keeps are the most recently created ones — by their row order on SQLite, by
// started_at and created_at on PostgreSQL (which has no rowid) — never the ones whose ids
// sort last. The ids here sort against their creation order.
func TestSnapshotKeepsTheMostRecentByCreation(t *testing.T) {
	t.Parallel()
	at := func(h int) string { return leaserec.FormatTime(now.Add(time.Duration(h) * time.Hour)) }
	ss := []leasestest.Session{ // inserted in the order they started
		{SessionID: "s-live", Status: "active", StartedAt: at(-4)},
		{SessionID: "s-c", Status: "ended", StartedAt: at(-3)},
		{SessionID: "s-b", Status: "ended", StartedAt: at(-2)},
		{SessionID: "s-a", Status: "ended", StartedAt: at(-1)},
	}
	var ls []leasestest.Lease
	for i, id := range []string{"l-c", "l-b", "l-a"} { // inserted in the order they were created
		ls = append(ls, leasestest.Lease{LeaseID: id, SessionID: "s-live", Work: leasestest.Work(leaserec.KindIssue, int64(i+1)),
			Status: leaserec.StatusReleased, CreatedAt: at(i - 3), ExpiresAt: at(i - 2)})
	}
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			tg := leases.Target{Loc: leasestest.NewDB(t, ss, ls)}
			if backend == "postgres" {
				tg, _ = newPG(t)
				leasestest.Insert(t, tg.Loc, ss, ls)
			}
			r, err := leases.OpenReader(tg)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			s, err := r.Snapshot(context.Background(), leases.ReadOptions{RecentEnded: 2, RecentTerminal: 2})
			if err != nil {
				t.Fatal(err)
			}
			var sessions, held []string
			for _, x := range s.Sessions {
				sessions = append(sessions, x.SessionID)
			}
			for _, l := range s.Leases {
				held = append(held, l.LeaseID)
			}
			// Sessions in the order they started; terminal leases the most recent first.
			if want := []string{"s-live", "s-b", "s-a"}; !slices.Equal(sessions, want) || s.SessionsOmitted != 1 {
				t.Errorf("sessions %v omitted %d, want %v omitted 1", sessions, s.SessionsOmitted, want)
			}
			if want := []string{"l-a", "l-b"}; !slices.Equal(held, want) {
				t.Errorf("terminal leases %v, want %v", held, want)
			}
		})
	}
}
