package leases_test

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"testing"
	"time"

	"steward/leases"
	"steward/leases/leaserec"
	"steward/leases/leasestest"
	"steward/leases/seedtest"
)

// seedDB builds a seed-shaped DB holding one active lease of session "holder" on item #7,
// with the status written as given.
func seedDB(t *testing.T, status string, opt seedtest.Options) *seedtest.DB {
	t.Helper()
	d := seedtest.New(t, opt)
	d.AddSession(seedtest.Session{SessionID: "holder", Role: "author", Profile: "prgs-author", PID: 4242,
		Status: "Active", LastHeartbeatAt: seedtest.Naive(now)})
	d.AddLease(seedtest.Lease{LeaseID: "lease-held", SessionID: "holder", Role: "author", Status: status,
		Item: seedtest.Issue(7), CreatedAt: seedtest.ISO(now), ExpiresAt: seedtest.Naive(now.Add(time.Hour)),
		LastHeartbeatAt: seedtest.ISO(now), OwnerPID: 4242})
	return d
}

func openStore(t *testing.T, path string) leases.Store {
	t.Helper()
	s, err := leases.OpenReadWrite(path, leases.StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func seedClaim(session string, n int64) leases.ClaimRequest {
	return leases.ClaimRequest{Session: leases.SessionInfo{SessionID: session, Role: "author", Profile: "prgs-author", PID: 99},
		Work: leasestest.Work(leaserec.KindIssue, n), Role: "author", OwnerPID: 99, WorktreePath: "/w/" + session}
}

// TestActiveInAnyCaseBlocksClaim: the seed compares lease statuses lower-cased, so a lease
// whose status reads ACTIVE, Active or " active " holds its item exactly as "active"
// does: a second session's claim is refused inside the transaction, on a seed-shaped DB
// and on one steward created (whose CHECK constraint a foreign writer may have bypassed).
// Before the fix the claim transaction compared status = 'active' and granted a second
// lease on the item.
func TestActiveInAnyCaseBlocksClaim(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		status string
		blocks bool
	}{{"active", true}, {"ACTIVE", true}, {"Active", true}, {" active\t", true},
		{"released", false}, {"RELEASED", false}, {"Expired", false}, {"abandoned", false}} {
		t.Run("seed/"+c.status, func(t *testing.T) {
			t.Parallel()
			d := seedDB(t, c.status, seedtest.Options{})
			out, err := openStore(t, d.Path).Claim(context.Background(), seedClaim("other", 7), now.Add(time.Minute))
			if err != nil {
				t.Fatal(err)
			}
			if got := out.Code == leases.CodeClaimedByOtherSession; got != c.blocks || (!c.blocks && !out.OK()) {
				t.Fatalf("status %q: claim %s %q, want blocked=%v", c.status, out.Code, out.Message, c.blocks)
			}
		})
		t.Run("steward/"+c.status, func(t *testing.T) {
			t.Parallel()
			path := leasestest.NewDB(t, nil, nil)
			db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(5000)&_pragma=ignore_check_constraints(1)")
			if err != nil {
				t.Fatal(err)
			}
			db.SetMaxOpenConns(1)
			for _, q := range []string{
				`INSERT INTO work_items(remote, org, repo, work_kind, work_number) VALUES('prgs', 'acme', 'widgets', 'issue', 7)`,
				`INSERT INTO leases(lease_id, work_item_id, session_id, status, created_at, expires_at)
				 VALUES('lease-held', 1, 'holder', '` + c.status + `', '2026-07-23T10:00:00Z', '2026-07-23T11:00:00Z')`,
			} {
				if _, err := db.Exec(q); err != nil {
					t.Fatal(err)
				}
			}
			db.Close()
			out, err := openStore(t, path).Claim(context.Background(), seedClaim("other", 7), now.Add(time.Minute))
			if err != nil {
				t.Fatal(err)
			}
			if got := out.Code == leases.CodeClaimedByOtherSession; got != c.blocks {
				t.Fatalf("status %q: claim %s %q, want blocked=%v", c.status, out.Code, out.Message, c.blocks)
			}
		})
	}
}

// TestCaseInsensitiveTransitions: heartbeat, release, reclaim, abandon and the sweep all
// take a lease whose status reads ACTIVE for active, inside their transactions.
func TestCaseInsensitiveTransitions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	lease := func(t *testing.T, s leases.Store, path string) leaserec.Lease {
		r, err := leases.OpenReadOnly(path)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		l, found, err := r.LeaseByID(ctx, "lease-held")
		if err != nil || !found {
			t.Fatal(found, err)
		}
		if l.Status != leaserec.StatusActive || l.StatusRaw != "ACTIVE" {
			t.Fatalf("status %q raw %q", l.Status, l.StatusRaw)
		}
		return l
	}
	later := now.Add(2 * time.Hour) // past the lease's expiry
	for name, run := range map[string]func(s leases.Store, l leaserec.Lease) (leases.Outcome, error){
		"heartbeat": func(s leases.Store, l leaserec.Lease) (leases.Outcome, error) {
			return s.Heartbeat(ctx, leases.FenceOf(l), now.Add(time.Minute))
		},
		"release": func(s leases.Store, l leaserec.Lease) (leases.Outcome, error) {
			return s.Release(ctx, leases.FenceOf(l), "", now)
		},
		"reclaim": func(s leases.Store, l leaserec.Lease) (leases.Outcome, error) {
			return s.ReclaimExpired(ctx, leases.FenceOf(l), "op", later)
		},
		"abandon": func(s leases.Store, l leaserec.Lease) (leases.Outcome, error) {
			return s.Abandon(ctx, leases.AbandonRequest{Fence: leases.FenceOf(l),
				Evidence: leaserec.Evidence{Owner: leaserec.ProcessDead}}, now)
		},
		"sweep": func(s leases.Store, l leaserec.Lease) (leases.Outcome, error) {
			out, err := s.ExpireSweep(ctx, later)
			if err == nil && len(out.Expired) != 1 {
				out.Code = "nothing swept"
			}
			return out, err
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			d := seedDB(t, "ACTIVE", seedtest.Options{})
			s := openStore(t, d.Path)
			out, err := run(s, lease(t, s, d.Path))
			if err != nil || !out.OK() {
				t.Fatalf("%s: %+v %v", name, out, err)
			}
		})
	}
}

// schemaSQL is the DB's schema as SQLite keeps it: every CREATE statement.
func schemaSQL(t *testing.T, path string) string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query("SELECT coalesce(sql, '') FROM sqlite_master ORDER BY name")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return strings.Join(out, "\n")
}

// TestForeignDBKeepsItsJournalAndSchema: opening a DB steward did not create for
// transitions, and a refused transition on it, change not one byte of the file or its
// journal (before the fix the read-write handle switched the file to WAL at open: header
// bytes 18-19 went from 1/1 to 2/2 and a -wal file appeared). Transitions that apply keep
// the rollback journal and the schema, and write timestamps the way the seed does.
func TestForeignDBKeepsItsJournalAndSchema(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := seedDB(t, "active", seedtest.Options{})
	before, schema := seedtest.Fingerprint(t, d.Path), schemaSQL(t, d.Path)
	if v := seedtest.HeaderVersions(t, d.Path); v != [2]byte{1, 1} {
		t.Fatalf("fixture header %v, want rollback journal 1/1", v)
	}
	s := openStore(t, d.Path)
	refusals := []func() (leases.Outcome, error){
		func() (leases.Outcome, error) { return s.Claim(ctx, seedClaim("other", 7), now) },
		func() (leases.Outcome, error) { return s.Release(ctx, leases.Fence{LeaseID: "lease-none"}, "", now) },
		func() (leases.Outcome, error) {
			return s.Release(ctx, leases.Fence{LeaseID: "lease-held", SessionID: "someone-else"}, "", now)
		},
		func() (leases.Outcome, error) {
			return s.ReclaimExpired(ctx, leases.Fence{LeaseID: "lease-held", SessionID: "holder",
				ExpiresAt: seedtest.Naive(now.Add(time.Hour))}, "op", now)
		},
		func() (leases.Outcome, error) {
			return s.Abandon(ctx, leases.AbandonRequest{Fence: leases.Fence{LeaseID: "lease-held", SessionID: "holder"},
				Evidence: leaserec.Evidence{Owner: leaserec.ProcessAlive}}, now)
		},
		func() (leases.Outcome, error) { return s.ExpireSweep(ctx, now) }, // nothing past expiry: writes nothing
	}
	for i, f := range refusals {
		out, err := f()
		if err != nil || (out.OK() && len(out.Expired) > 0) || (i < len(refusals)-1 && out.OK()) {
			t.Fatalf("refusal %d: %+v %v", i, out, err)
		}
		if got := seedtest.Fingerprint(t, d.Path); got != before {
			t.Fatalf("refusal %d (%s) changed the DB or its journal", i, out.Code)
		}
	}
	out, err := s.Claim(ctx, seedClaim("newcomer", 8), now)
	if err != nil || !out.OK() {
		t.Fatalf("claim on a seed DB: %+v %v", out, err)
	}
	if m := seedtest.JournalMode(t, d.Path); m != "delete" {
		t.Fatalf("journal mode %q after a write, want the file's own delete", m)
	}
	if v := seedtest.HeaderVersions(t, d.Path); v != [2]byte{1, 1} {
		t.Fatalf("header %v after a write", v)
	}
	if got := schemaSQL(t, d.Path); got != schema {
		t.Fatalf("schema changed:\n%s\nwas\n%s", got, schema)
	}
	if !strings.HasSuffix(out.Lease.ExpiresAt.Raw, "+00:00") || !out.Lease.ExpiresAt.Time.Equal(now.Add(10*time.Minute)) {
		t.Fatalf("expires_at %q: want the seed's isoformat", out.Lease.ExpiresAt.Raw)
	}
}

// TestMigrateRefusesAForeignDBUntouched: Migrate refuses a schema it did not create
// before anything is written (it used to set WAL in its DSN first).
func TestMigrateRefusesAForeignDBUntouched(t *testing.T) {
	t.Parallel()
	d := seedDB(t, "active", seedtest.Options{})
	before := seedtest.Fingerprint(t, d.Path)
	if err := leases.Migrate(d.Path); !errors.Is(err, leases.ErrForeignSchema) {
		t.Fatalf("migrate foreign: %v", err)
	}
	if seedtest.Fingerprint(t, d.Path) != before {
		t.Fatal("a refused Migrate changed the foreign DB")
	}
}

// TestTransitionsOnSeedDB: every transition applies on a seed-shaped DB, writing only the
// columns the DB has, with the seed's event types and messages; an event that cannot name
// its session in a session_id column says it in its message.
func TestTransitionsOnSeedDB(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := seedtest.New(t, seedtest.Options{})
	s := openStore(t, d.Path)
	claim, err := s.Claim(ctx, seedClaim("w1", 3), now)
	if err != nil || !claim.OK() {
		t.Fatalf("claim: %+v %v", claim, err)
	}
	l := claim.Lease
	if l.TaskClass != "" || l.Status != leaserec.StatusActive || l.Work.Number != 3 || l.OwnerPID != 99 {
		t.Fatalf("lease %+v", l)
	}
	hb, err := s.Heartbeat(ctx, leases.FenceOf(*l), now.Add(time.Minute))
	if err != nil || !hb.OK() || hb.Lease.HeartbeatCount != 1 {
		t.Fatalf("heartbeat: %+v %v", hb, err)
	}
	rel, err := s.Release(ctx, leases.FenceOf(*hb.Lease), "done", now.Add(2*time.Minute))
	if err != nil || !rel.OK() || rel.Lease.Status != leaserec.StatusReleased || rel.Lease.ReleasedAt.Raw == "" {
		t.Fatalf("release: %+v %v", rel, err)
	}
	// A second claim refused: no event (the seed's events cannot name both sessions),
	// nothing committed.
	if _, err := s.Claim(ctx, seedClaim("w1", 4), now); err != nil {
		t.Fatal(err)
	}
	before := seedtest.Fingerprint(t, d.Path)
	ref, err := s.Claim(ctx, seedClaim("w2", 4), now)
	if err != nil || ref.Code != leases.CodeClaimedByOtherSession || len(ref.EventIDs) != 0 {
		t.Fatalf("refused claim: %+v %v", ref, err)
	}
	if seedtest.Fingerprint(t, d.Path) != before {
		t.Fatal("a refused claim wrote to a seed-shaped DB")
	}
	evs := events(t, d.Path, "lease.renew")
	if len(evs) != 1 || !strings.HasPrefix(evs[0].Message, "lease renewed") || !strings.Contains(evs[0].Message, "[session w1]") {
		t.Fatalf("renew events %+v", evs)
	}
}

// TestSchemaUnsupported: a transition that cannot be done safely without a column the DB
// lacks is refused — Reader.Supports (the preview) and the transition (the apply) with
// the same code — and writes nothing.
func TestSchemaUnsupported(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := seedtest.New(t, seedtest.Options{Drop: []string{"leases.expires_at"}})
	before := seedtest.Fingerprint(t, d.Path)
	r, err := leases.OpenReadOnly(d.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	s := openStore(t, d.Path)
	for _, op := range []leases.Op{leases.OpClaim, leases.OpHeartbeat, leases.OpReclaim, leases.OpSweep} {
		v, err := r.Supports(ctx, op)
		if err != nil || v.OK || v.Code != leases.CodeSchemaUnsupported || !strings.Contains(v.Message, "leases.expires_at") {
			t.Fatalf("%s: %+v %v", op, v, err)
		}
	}
	for _, op := range []leases.Op{leases.OpRelease, leases.OpAbandon} {
		if v, err := r.Supports(ctx, op); err != nil || !v.OK {
			t.Fatalf("%s needs no expiry: %+v %v", op, v, err)
		}
	}
	out, err := s.Claim(ctx, seedClaim("w1", 3), now)
	if err != nil || out.Code != leases.CodeSchemaUnsupported {
		t.Fatalf("claim: %+v %v", out, err)
	}
	out, err = s.ExpireSweep(ctx, now)
	if err != nil || out.Code != leases.CodeSchemaUnsupported {
		t.Fatalf("sweep: %+v %v", out, err)
	}
	if seedtest.Fingerprint(t, d.Path) != before {
		t.Fatal("a schema refusal wrote to the DB")
	}
}

// TestLeaseGenerationFence: where the DB has the seed's lease_generation_id, a claim takes
// the item's next generation, a renewal increments it, and a transition fenced on an older
// generation is refused fence_moved.
func TestLeaseGenerationFence(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := seedtest.New(t, seedtest.Options{Add: []string{"leases.lease_generation_id INTEGER"}})
	d.AddLease(seedtest.Lease{LeaseID: "lease-old", SessionID: "w0", Status: "released", Item: seedtest.Issue(3),
		CreatedAt: seedtest.Naive(now), ExpiresAt: seedtest.Naive(now), Generation: 4})
	s := openStore(t, d.Path)
	claim, err := s.Claim(ctx, seedClaim("w1", 3), now)
	if err != nil || !claim.OK() || !claim.Lease.HasGeneration || claim.Lease.Generation != 5 {
		t.Fatalf("claim: %+v %v", claim.Lease, err)
	}
	hb, err := s.Heartbeat(ctx, leases.FenceOf(*claim.Lease), now.Add(time.Minute))
	if err != nil || !hb.OK() || hb.Lease.Generation != 6 {
		t.Fatalf("heartbeat: %+v %v", hb, err)
	}
	// Another node takes the lease over (the ADR's Node B): only the generation moves. A
	// writer fenced on the older generation is refused, though every other field it read
	// is unchanged.
	stale := leases.FenceOf(*hb.Lease)
	d.Exec("UPDATE leases SET lease_generation_id = 7 WHERE lease_id = '" + hb.Lease.LeaseID + "'")
	out, err := s.Release(ctx, stale, "", now.Add(2*time.Minute))
	if err != nil || out.Code != leases.CodeFenceMoved || !strings.Contains(out.Message, "lease_generation_id 7, fenced on 6") {
		t.Fatalf("release fenced on an old generation: %+v %v", out, err)
	}
	current := stale
	current.Generation = 7
	out, err = s.Release(ctx, current, "", now.Add(2*time.Minute))
	if err != nil || !out.OK() || out.Lease.Generation != 7 {
		t.Fatalf("release on the current generation: %+v %v", out, err)
	}
}

// TestSeedSnapshotReadsOK: a seed-shaped DB reads ok in every section; the columns steward
// added are notes, statuses and kinds read folded, both of the seed's timestamp forms parse.
func TestSeedSnapshotReadsOK(t *testing.T) {
	t.Parallel()
	d := seedDB(t, "ACTIVE", seedtest.Options{})
	d.AddLease(seedtest.Lease{LeaseID: "lease-pr", SessionID: "holder", Role: "Reviewer", Status: "Released",
		Item:      seedtest.Item{Remote: "prgs", Org: "acme", Repo: "widgets", Kind: "PR", Number: 9},
		CreatedAt: seedtest.Naive(now), ExpiresAt: seedtest.ISO(now.Add(time.Minute))})
	d.AddEvent(seedtest.Event{Item: ptr(seedtest.Issue(7)), Type: "lease.renew", Message: "lease renewed", CreatedAt: seedtest.Naive(now)})
	s := snapshot(t, d.Path)
	for name, h := range map[string]leaserec.Health{"meta": s.MetaHealth, "sessions": s.SessionsHealth,
		"work items": s.WorkItemsHealth, "leases": s.LeasesHealth, "assignments": s.AssignmentsHealth} {
		if h.Status != leaserec.HealthOK || len(h.Reasons) != 0 {
			t.Errorf("%s: %+v", name, h)
		}
	}
	notes := strings.Join(append(s.SessionsHealth.Notes, s.LeasesHealth.Notes...), "|")
	for _, c := range []string{"sessions.host", "leases.task_class", "leases.owner_host", "leases.end_reason"} {
		if !strings.Contains(notes, c) {
			t.Errorf("no note of %s in %q", c, notes)
		}
	}
	if len(s.Leases) != 2 || s.Leases[0].Status != leaserec.StatusActive || s.Leases[1].Status != leaserec.StatusReleased ||
		s.Leases[1].Work.Kind != leaserec.KindPR || !s.Leases[0].ExpiresAt.OK() || !s.Leases[1].ExpiresAt.OK() {
		t.Fatalf("leases %+v", s.Leases)
	}
}

func ptr[T any](v T) *T { return &v }
