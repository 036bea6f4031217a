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
