package leases_test

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"steward/leases"
	"steward/leases/leaserec"
)

// TestClaimRefusesEachMissingPart: a claim request that lacks one part of what a lease
// needs is refused invalid_request, naming the part, and the DB's bytes do not change; the
// smallest request of each kind that is whole is a lease. Each row removes one part, so a
// check of the request that let any one of them through fails here.
func TestClaimRefusesEachMissingPart(t *testing.T) {
	t.Parallel()
	path, s := newStore(t, leases.StoreOptions{})
	ctx := context.Background()
	for _, c := range []struct {
		name string
		edit func(*leases.ClaimRequest)
		says string
	}{
		{"no session", func(r *leases.ClaimRequest) { r.Session.SessionID = "" }, "session id"},
		{"no remote", func(r *leases.ClaimRequest) { r.Work.Remote = "" }, "remote/org/repo"},
		{"no org", func(r *leases.ClaimRequest) { r.Work.Org = "" }, "remote/org/repo"},
		{"no repo", func(r *leases.ClaimRequest) { r.Work.Repo = "" }, "remote/org/repo"},
		{"no kind", func(r *leases.ClaimRequest) { r.Work.Kind = "" }, "work kind"},
		{"another kind", func(r *leases.ClaimRequest) { r.Work.Kind = "discussion" }, "work kind"},
		{"number zero", func(r *leases.ClaimRequest) { r.Work.Number = 0 }, "work number"},
		{"number below zero", func(r *leases.ClaimRequest) { r.Work.Number = -3 }, "work number"},
	} {
		req := claimReq("sess-v", 5)
		c.edit(&req)
		before := fileHash(t, path)
		out, err := s.Claim(ctx, req, now)
		if err != nil || out.Code != leases.CodeInvalidRequest || !strings.Contains(out.Message, c.says) {
			t.Errorf("%s: %+v %v, want invalid_request naming %q", c.name, out, err, c.says)
		}
		if fileHash(t, path) != before {
			t.Errorf("%s: the refused claim changed the DB file", c.name)
		}
	}
	for i, kind := range []leaserec.WorkKind{leaserec.KindIssue, leaserec.KindPR} {
		req := claimReq("sess-v", 1)
		req.Work.Kind = kind
		req.Session.SessionID = []string{"sess-issue", "sess-pr"}[i]
		if out, err := s.Claim(ctx, req, now); err != nil || !out.OK() {
			t.Errorf("a whole %s claim of number 1: %+v %v", kind, out, err)
		}
	}
}

func fileHash(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// TestClaimGivesUpAfterItsRounds: when the conditional insert of the lease writes nothing
// and yet no holder can be named (on PostgreSQL a holder that ended between the two
// statements; here a DB whose trigger drops every new lease), the claim tries again a bounded
// number of times, then answers busy — it neither loops nor reports a lease it did not write.
func TestClaimGivesUpAfterItsRounds(t *testing.T) {
	t.Parallel()
	path, s := newStore(t, leases.StoreOptions{})
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TRIGGER drop_new_leases BEFORE INSERT ON leases BEGIN SELECT RAISE(IGNORE); END`); err != nil {
		t.Fatal(err)
	}
	// A hang limit, not a measure: a claim that never stops trying ends with its context.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := s.Claim(ctx, claimReq("sess-r", 9), now)
	if err != nil || out.Code != leases.CodeBusy || out.Lease != nil {
		t.Fatalf("claim under a DB that drops the lease: %+v %v, want busy and no lease", out, err)
	}
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM leases`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("leases after the busy claim: %d %v", n, err)
	}
}

// TestClaimTriesItsRoundsExactly: a claim whose conditional insert finds the item held by
// a holder that has ended meanwhile tries again, three rounds in all: dropped twice, the
// third round writes the lease; dropped three times, the claim is busy and writes nothing.
// (A trigger drops the first inserts, counting them in a table of its own: the count is
// rolled back with a claim that writes nothing.)
func TestClaimTriesItsRoundsExactly(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		drops int
		busy  bool
	}{{0, false}, {2, false}, {3, true}} {
		t.Run(fmt.Sprintf("drops=%d", c.drops), func(t *testing.T) {
			path, s := newStore(t, leases.StoreOptions{})
			db, err := sql.Open("sqlite", path)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			for _, q := range []string{
				`CREATE TABLE gate (n INTEGER NOT NULL)`,
				`INSERT INTO gate VALUES (0)`,
				fmt.Sprintf(`CREATE TRIGGER drop_first_leases BEFORE INSERT ON leases WHEN (SELECT n FROM gate) < %d
					BEGIN UPDATE gate SET n = n + 1; SELECT RAISE(IGNORE); END`, c.drops),
			} {
				if _, err := db.Exec(q); err != nil {
					t.Fatal(err)
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a hang limit
			defer cancel()
			out, err := s.Claim(ctx, claimReq("sess-r", 9), now)
			if err != nil {
				t.Fatal(err)
			}
			var n, tries int
			if err := db.QueryRow(`SELECT count(*) FROM leases`).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if err := db.QueryRow(`SELECT n FROM gate`).Scan(&tries); err != nil {
				t.Fatal(err)
			}
			switch {
			case c.busy && (out.Code != leases.CodeBusy || out.Lease != nil || n != 0 ||
				!strings.Contains(out.Message, "changed hands 3 times")):
				t.Fatalf("%d inserts dropped: %+v, %d leases, want busy after 3 rounds and none", c.drops, out, n)
			case !c.busy && (out.Lease == nil || n != 1 || tries != c.drops):
				t.Fatalf("%d inserts dropped: %+v, %d leases, %d dropped, want the lease written in round %d",
					c.drops, out, n, tries, c.drops+1)
			}
		})
	}
}

// TestClaimRecordsNoPIDForZero: a claim that gives no pid (0) leaves the lease's owner_pid and
// the session's pid NULL,
// as the seed's rows do for an unknown process — never pid 0, which liveness would probe.
func TestClaimRecordsNoPIDForZero(t *testing.T) {
	t.Parallel()
	path, s := newStore(t, leases.StoreOptions{})
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, c := range []struct {
		n   int64
		pid int64
	}{{1, 0}, {2, 4242}} {
		req := claimReq("sess-p", c.n)
		req.OwnerPID, req.Session.PID = c.pid, c.pid
		req.Session.SessionID = fmt.Sprintf("sess-p%d", c.n)
		l := mustClaimReq(t, s, req)
		var owner, session sql.NullInt64
		if err := db.QueryRow(`SELECT owner_pid FROM leases WHERE lease_id = ?`, l.LeaseID).Scan(&owner); err != nil {
			t.Fatal(err)
		}
		if err := db.QueryRow(`SELECT pid FROM sessions WHERE session_id = ?`, req.Session.SessionID).Scan(&session); err != nil {
			t.Fatal(err)
		}
		want := sql.NullInt64{Int64: c.pid, Valid: c.pid > 0}
		if owner != want || session != want {
			t.Errorf("pid %d recorded as %+v on the lease and %+v on the session, want %+v", c.pid, owner, session, want)
		}
	}
}

// TestClaimWritesItsSessionOrNothing: the claim registers its session before the lease. When
// the DB refuses that row (a trigger aborts the insert), the claim fails and writes nothing —
// no lease without its session. When another claim inserts the same session between this
// claim's update and its insert (a trigger writes the row first, ended, and drops the
// insert), the claim updates that row: the session is active with this claim's pid and host.
func TestClaimWritesItsSessionOrNothing(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, trigger string
		fails         bool
	}{
		{"the insert is refused", `CREATE TRIGGER refuse_sessions BEFORE INSERT ON sessions
			BEGIN SELECT RAISE(ABORT, 'sessions are refused'); END`, true},
		{"another claim inserts it first", `CREATE TRIGGER other_first BEFORE INSERT ON sessions
			WHEN NOT EXISTS (SELECT 1 FROM sessions WHERE session_id = NEW.session_id)
			BEGIN
				INSERT INTO sessions (session_id, status, started_at, ended_at)
					VALUES (NEW.session_id, 'ended', '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z');
				SELECT RAISE(IGNORE);
			END`, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			path, s := newStore(t, leases.StoreOptions{})
			db, err := sql.Open("sqlite", path)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if _, err := db.Exec(c.trigger); err != nil {
				t.Fatal(err)
			}
			out, err := s.Claim(context.Background(), claimReq("sess-s", 11), now)
			count := func(table string) (n int) {
				if err := db.QueryRow(`SELECT count(*) FROM ` + table).Scan(&n); err != nil {
					t.Fatal(err)
				}
				return n
			}
			if c.fails {
				if err == nil || out.OK() {
					t.Fatalf("claim whose session the DB refuses: %+v %v, want an error", out, err)
				}
				for _, table := range []string{"sessions", "work_items", "leases", "events"} {
					if n := count(table); n != 0 {
						t.Errorf("the failed claim left %d rows in %s", n, table)
					}
				}
				return
			}
			if err != nil || !out.OK() {
				t.Fatalf("claim: %+v %v", out, err)
			}
			var status, host string
			var pid sql.NullInt64
			var ended sql.NullString
			if err := db.QueryRow(`SELECT status, pid, host, ended_at FROM sessions WHERE session_id = 'sess-s'`).
				Scan(&status, &pid, &host, &ended); err != nil {
				t.Fatal(err)
			}
			if status != "active" || pid.Int64 != 42 || host != "h1" || ended.Valid {
				t.Errorf("session after the claim: status %q pid %+v host %q ended %+v, want active, 42, h1, not ended",
					status, pid, host, ended)
			}
		})
	}
}

// TestClaimKeepsOrReplacesTheTitle: a claim of an item already recorded replaces its title
// with the one it gives, and a claim that gives none keeps the recorded title — it never
// blanks it.
func TestClaimKeepsOrReplacesTheTitle(t *testing.T) {
	t.Parallel()
	path, s := newStore(t, leases.StoreOptions{})
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	for i, c := range []struct{ give, want string }{
		{"Widgets crash on start", "Widgets crash on start"}, // the first claim records the item
		{"", "Widgets crash on start"},
		{"Widgets crash on start with no config", "Widgets crash on start with no config"},
		{"", "Widgets crash on start with no config"},
	} {
		req := claimReq("sess-t", 12)
		req.Title = c.give
		l := mustClaimReq(t, s, req)
		var title string
		if err := db.QueryRow(`SELECT title FROM work_items WHERE work_item_id = ?`, l.WorkItemID).Scan(&title); err != nil {
			t.Fatal(err)
		}
		if title != c.want {
			t.Errorf("claim %d giving title %q: recorded %q, want %q", i, c.give, title, c.want)
		}
		if out, err := s.Release(ctx, leases.FenceOf(*l), "next", now); err != nil || !out.OK() {
			t.Fatalf("release: %+v %v", out, err)
		}
	}
}
