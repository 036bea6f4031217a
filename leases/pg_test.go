package leases_test

import (
	"context"
	"database/sql"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"steward/leases"
	"steward/leases/leaserec"
	"steward/leases/pgtest"
)

func TestMain(m *testing.M) {
	if path := os.Getenv(writerHelperEnv); path != "" {
		os.Exit(writerHelper(path)) // a writer process of readonly_test.go
	}
	pgtest.Main(m)
}

// newPG is a fresh database initialised by steward.
func newPG(t *testing.T) (leases.Target, *sql.DB) {
	t.Helper()
	url := pgtest.NewDBFrom(t, "steward", func(url string) error {
		_, err := leases.InitPG(context.Background(), leases.Target{Loc: url})
		return err
	})
	raw, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close() })
	return leases.Target{Loc: url}, raw
}

func openPGStore(t *testing.T, tg leases.Target) *leases.PGStore {
	t.Helper()
	s, err := leases.OpenPGStore(context.Background(), tg, leases.StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestPGDeadlockIsRetried: a transition the server breaks off as a deadlock victim is
// run again as a whole, and applies once. The deadlock is real: another connection
// holds the session row a heartbeat updates after locking its lease, then asks for the
// lease. The test fails when run's retry is removed (the heartbeat returns the error).
func TestPGDeadlockIsRetried(t *testing.T) {
	tg, raw := newPG(t)
	ctx := context.Background()
	s := openPGStore(t, tg)
	out, err := s.Claim(ctx, claimReq("s1", 1), now)
	if err != nil || !out.OK() {
		t.Fatalf("claim %+v %v", out, err)
	}
	l := out.Lease
	other, err := raw.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.ExecContext(ctx, `SET deadlock_timeout = '30s'`); err != nil { // the heartbeat detects it first
		t.Fatal(err)
	}
	tx, err := other.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, `SELECT 1 FROM sessions WHERE session_id = 's1' FOR UPDATE`); err != nil {
		t.Fatal(err)
	}
	type result struct {
		out leases.Outcome
		err error
	}
	done := make(chan result, 1)
	go func() {
		o, e := s.Heartbeat(ctx, leases.FenceOf(*l), now)
		done <- result{o, e}
	}()
	// Wait until the heartbeat holds the lease and waits for the session row.
	waitFor(t, func() bool {
		var n int
		_ = raw.QueryRowContext(ctx, `SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'
			AND query LIKE 'UPDATE sessions%'`).Scan(&n)
		return n == 1
	})
	lockErr := make(chan error, 1)
	go func() {
		_, err := tx.ExecContext(ctx, `SELECT 1 FROM leases WHERE lease_id = $1 FOR UPDATE`, l.LeaseID)
		lockErr <- err
	}()
	// The heartbeat is the deadlock's victim; its rollback lets the other connection
	// take the lease, which then ends its transaction and lets the retry through.
	if err := <-lockErr; err != nil {
		t.Fatalf("the other connection was the victim: %v", err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil || !r.out.OK() {
		t.Fatalf("heartbeat after a deadlock: %+v %v", r.out, r.err)
	}
	if s.Retries() < 1 {
		t.Fatalf("retries %d: the deadlock was not retried", s.Retries())
	}
	var renews, count int
	if err := raw.QueryRow(`SELECT count(*) FROM events WHERE event_type = 'lease.renew'`).Scan(&renews); err != nil {
		t.Fatal(err)
	}
	if err := raw.QueryRow(`SELECT heartbeat_count FROM leases WHERE lease_id = $1`, l.LeaseID).Scan(&count); err != nil {
		t.Fatal(err)
	}
	if renews != 1 || count != 1 {
		t.Fatalf("the retried heartbeat applied %d times (%d events)", count, renews)
	}
}

// TestPGFailedFenceIsNeverRetried: a refusal is an answer, not a conflict.
func TestPGFailedFenceIsNeverRetried(t *testing.T) {
	tg, _ := newPG(t)
	ctx := context.Background()
	s := openPGStore(t, tg)
	out, err := s.Claim(ctx, claimReq("s1", 1), now)
	if err != nil || !out.OK() {
		t.Fatalf("claim %+v %v", out, err)
	}
	f := leases.FenceOf(*out.Lease)
	f.Generation++
	got, err := s.Heartbeat(ctx, f, now)
	if err != nil || got.Code != leases.CodeFenceMoved {
		t.Fatalf("stale generation: %+v %v", got, err)
	}
	if s.Retries() != 0 {
		t.Fatalf("a failed fence was retried %d times", s.Retries())
	}
}

// TestPGTransitionsUseTheDatabaseClock: the node's now is never a fence. A heartbeat
// whose caller believes it is ten years later renews the lease (the DB's clock says it
// is live), and a claim made with a clock ten years behind expires by the DB's clock;
// reclaim and abandon judge the lease's expiry and staleness by the DB's clock too.
func TestPGTransitionsUseTheDatabaseClock(t *testing.T) {
	tg, _ := newPG(t)
	ctx := context.Background()
	s := openPGStore(t, tg)
	r, err := leases.OpenPGReader(ctx, tg)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	dbNow, err := r.Clock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Claim(ctx, claimReq("s1", 1), dbNow.Add(-10*365*24*time.Hour))
	if err != nil || !out.OK() {
		t.Fatalf("claim %+v %v", out, err)
	}
	if d := out.Lease.CreatedAt.Time.Sub(dbNow); d < -time.Minute || d > time.Minute {
		t.Fatalf("created_at %s, the DB's clock read %s", out.Lease.CreatedAt.Raw, dbNow)
	}
	got, err := s.Heartbeat(ctx, leases.FenceOf(*out.Lease), dbNow.Add(10*365*24*time.Hour))
	if err != nil || !got.OK() {
		t.Fatalf("heartbeat judged by the caller's clock: %+v %v", got, err)
	}
	rec, err := s.ReclaimExpired(ctx, leases.FenceOf(*got.Lease), "op", dbNow.Add(10*365*24*time.Hour))
	if err != nil || rec.Code != leases.CodeNotExpired {
		t.Fatalf("reclaim judged by the caller's clock: %+v %v", rec, err)
	}
	// By the caller's clock the lease is past its expiry, which is never stale ("reclaim it
	// instead"); by the server's it is live and its owner dead: stale, so it is abandoned.
	dead := leaserec.Evidence{Owner: leaserec.ProcessDead, Worktree: leaserec.WorktreePresent}
	ab, err := s.Abandon(ctx, leases.AbandonRequest{Fence: leases.FenceOf(*got.Lease), Evidence: dead, Actor: "op"},
		dbNow.Add(10*365*24*time.Hour))
	if err != nil || ab.Code != leases.CodeOK || ab.Freshness == nil || ab.Freshness.Value != leaserec.FreshStaleDeadProcess {
		t.Fatalf("abandon judged by the caller's clock: %+v %v", ab, err)
	}
}

// TestPGInit: steward init creates the schema once, migrates idempotently, refuses a
// database holding anyone else's tables without writing, and nothing but init makes a
// schema (a store on an empty database says to run init).
func TestPGInit(t *testing.T) {
	ctx := context.Background()
	url := pgtest.NewDB(t)
	tg := leases.Target{Loc: url}
	if _, err := leases.OpenPGStore(ctx, tg, leases.StoreOptions{}); !errors.Is(err, leases.ErrNotInitialised) {
		t.Fatalf("store on an empty DB: %v", err)
	}
	n1, err := leases.InitPG(ctx, tg)
	if err != nil || n1 < 1 {
		t.Fatalf("init: %d %v", n1, err)
	}
	n2, err := leases.InitPG(ctx, tg)
	if err != nil || n2 != n1 {
		t.Fatalf("second init: %d %v", n2, err)
	}
	foreign := pgtest.NewDB(t)
	pgtest.Exec(t, foreign, `CREATE TABLE leases (lease_id text PRIMARY KEY, status text)`)
	_, err = leases.InitPG(ctx, leases.Target{Loc: foreign})
	if !errors.Is(err, leases.ErrForeignSchema) {
		t.Fatalf("init on another's schema: %v", err)
	}
	raw, err := sql.Open("pgx", foreign)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var tables int
	if err := raw.QueryRow(`SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'`).Scan(&tables); err != nil || tables != 1 {
		t.Fatalf("the refused init left %d tables (%v)", tables, err)
	}
}

// TestPGURLPasswordsStayOutOfArgvAndOutput: a URL carrying a password is refused before
// any connection, saying where the password belongs; a password file readable by
// others is refused; no error or shown location ever holds the password.
func TestPGURLPasswordsStayOutOfArgvAndOutput(t *testing.T) {
	ctx := context.Background()
	const secret = "s3cret-pw-4411"
	for _, loc := range []string{"postgres://u:" + secret + "@127.0.0.1:1/db", "postgresql://u@127.0.0.1:1/db?password=" + secret} {
		_, err := leases.OpenPGReader(ctx, leases.Target{Loc: loc})
		if !errors.Is(err, leases.ErrBadURL) || !strings.Contains(err.Error(), "PGPASSWORD") || strings.Contains(err.Error(), secret) {
			t.Fatalf("%v", err)
		}
		if s := (leases.Target{Loc: loc}).String(); strings.Contains(s, secret) {
			t.Fatalf("shown as %q", s)
		}
	}
	dir := t.TempDir()
	pw := filepath.Join(dir, "pw")
	if err := os.WriteFile(pw, []byte(secret+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	port := closedPort(t)
	loc := "postgres://u@127.0.0.1:" + strconv.Itoa(port) + "/db?sslmode=disable"
	_, err := leases.OpenPGReader(ctx, leases.Target{Loc: loc, PasswordFile: pw})
	if err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("a world-readable password file: %v", err)
	}
	if err := os.Chmod(pw, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = leases.OpenPGReader(ctx, leases.Target{Loc: loc, PasswordFile: pw})
	if !errors.Is(err, leases.ErrUnreachable) || strings.Contains(err.Error(), secret) {
		t.Fatalf("unreachable server: %v", err)
	}
	h := leases.HealthFromError(err)
	if h.Status != leaserec.HealthUnavailable || !strings.Contains(h.Reasons[0], "unreachable") || strings.Contains(h.Reasons[0], secret) {
		t.Fatalf("health %+v", h)
	}
}

// TestPGReaderNeverWrites: the reader's sessions are read-only by default, so no
// statement through it can change the database.
func TestPGReaderNeverWrites(t *testing.T) {
	tg, raw := newPG(t)
	r, err := leases.OpenPGReader(context.Background(), tg)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var ro string
	if err := raw.QueryRow(`SELECT setting FROM pg_settings WHERE name = 'default_transaction_read_only'`).Scan(&ro); err != nil {
		t.Fatal(err)
	}
	if ro != "off" {
		t.Fatalf("the test's own session is read-only: %s", ro)
	}
	if !leases.PGReaderReadOnly(r) {
		t.Fatal("the reader's sessions are not read-only")
	}
}

func closedPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return p
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached within 60s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestPGClaimStampsAfterItsWait: a claim that waits between reading the DB's clock and
// writing its lease — here for its session's row, held by another transaction — while
// another worker claims and releases the item, stamps its lease with a time after that
// release, never before it: by the DB's own timestamps the item never has two owners
// at once. On the code before, the claim stamped the time it read before the wait
// (created_at before the other lease's released_at); cli.TestTwoHostsOnePostgres saw it.
func TestPGClaimStampsAfterItsWait(t *testing.T) {
	tg, raw := newPG(t)
	ctx := context.Background()
	s := openPGStore(t, tg)
	// s1's session row exists (its first lease on another item, released).
	first := mustClaim(t, s, "s1", 2, now)
	if out, err := s.Release(ctx, leases.FenceOf(*first), "done", now); err != nil || !out.OK() {
		t.Fatalf("release: %+v %v", out, err)
	}
	other, err := raw.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	tx, err := other.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `SELECT 1 FROM sessions WHERE session_id = 's1' FOR UPDATE`); err != nil {
		t.Fatal(err)
	}
	type result struct {
		out leases.Outcome
		err error
	}
	done := make(chan result, 1)
	go func() {
		o, e := s.Claim(ctx, claimReq("s1", 1), now)
		done <- result{o, e}
	}()
	// The claim has read the clock and waits for its session's row.
	waitFor(t, func() bool {
		var n int
		_ = raw.QueryRowContext(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()
			AND wait_event_type = 'Lock' AND query LIKE 'UPDATE sessions%'`).Scan(&n)
		return n == 1
	})
	b := mustClaim(t, s, "s2", 1, now)
	rel, err := s.Release(ctx, leases.FenceOf(*b), "done", now)
	if err != nil || !rel.OK() {
		t.Fatalf("release: %+v %v", rel, err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil || !r.out.OK() {
		t.Fatalf("the waiting claim: %+v %v", r.out, r.err)
	}
	var released, created time.Time
	if err := raw.QueryRow(`SELECT released_at FROM leases WHERE lease_id = $1`, b.LeaseID).Scan(&released); err != nil {
		t.Fatal(err)
	}
	if err := raw.QueryRow(`SELECT created_at FROM leases WHERE lease_id = $1`, r.out.Lease.LeaseID).Scan(&created); err != nil {
		t.Fatal(err)
	}
	if created.Before(released) {
		t.Fatalf("the waiting claim's lease was created at %s, before the other owner released at %s: two owners at once",
			created.Format(time.RFC3339Nano), released.Format(time.RFC3339Nano))
	}
}

// TestPGConflictsEndBusy: a transition PostgreSQL keeps breaking off as conflicting with
// concurrent writers (serialization failure, every time: a trigger raises it) is run again
// a bounded number of times and then refused busy, naming how often, with nothing written
// — never retried without end.
func TestPGConflictsEndBusy(t *testing.T) {
	tg, raw := newPG(t)
	for _, q := range []string{
		`CREATE FUNCTION steward_test_conflict() RETURNS trigger LANGUAGE plpgsql AS
			$$ BEGIN RAISE EXCEPTION 'a conflict, every time' USING ERRCODE = '40001'; END $$`,
		`CREATE TRIGGER always_conflicts BEFORE INSERT ON leases FOR EACH ROW EXECUTE FUNCTION steward_test_conflict()`,
	} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	s := openPGStore(t, tg)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a hang limit, not a measure
	defer cancel()
	out, err := s.Claim(ctx, claimReq("sess-c", 1), now)
	if err != nil || out.Code != leases.CodeBusy || !strings.Contains(out.Message, "off 8 times") {
		t.Fatalf("claim under a conflict every time: %+v %v; want busy after 8 tries", out, err)
	}
	var n int
	if err := raw.QueryRow(`SELECT count(*) FROM leases`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("leases after the busy claim: %d %v", n, err)
	}
}
