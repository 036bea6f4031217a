package live

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"steward/leases"
	"steward/leases/pgtest"
	"steward/model"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// newLivePG is a live model over an empty locks directory and a PostgreSQL control plane
// steward initialised, with the store that writes it as workers on any host would. The
// periodic resync is an hour: within a test only the transitions' notices (LISTEN) can
// bring a change.
func newLivePG(t *testing.T, backoff time.Duration) (*liveDB, string) {
	t.Helper()
	u := pgtest.NewDBFrom(t, "steward", func(url string) error {
		_, err := leases.InitPG(context.Background(), leases.Target{Loc: url})
		return err
	})
	dir := t.TempDir()
	ws := Workspace{LocksDir: filepath.Join(dir, "locks"), DBPath: u, RepoRoot: filepath.Join(dir, "repo")}
	if err := os.MkdirAll(ws.LocksDir, 0o700); err != nil {
		t.Fatal(err)
	}
	st, err := leases.OpenPGStore(context.Background(), ws.DBTarget(), leases.StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	// The DB's clock stamps the leases; the model's clock is the real one too.
	d := &liveDB{t: t, ws: ws, clock: &clock{t: time.Now()}, probe: Probe{Host: "here"}, store: st}
	d.live = New(ws, Options{Now: d.clock.Now, Probe: &d.probe, Resync: time.Hour, ProbeEvery: time.Hour, ListenBackoff: backoff})
	if err := d.live.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.live.Close() })
	return d, u
}

// TestLivePostgresListens: on a PostgreSQL control plane every committed transition
// reaches the live model by its notice — with the periodic resync an hour away — and is
// applied by a scoped read of the items it names, as the SQLite path does with
// data_version; the result is what a cold read derives. Without the listener (the
// model's DB watcher on PostgreSQL before it) no change arrives within the test.
func TestLivePostgresListens(t *testing.T) {
	d, _ := newLivePG(t, 0)
	ctx := context.Background()
	d.waitFor("the DB read ok", func(s *model.Snapshot) bool { return s.Sources.DB.Status == model.StatusOK })
	full0 := d.live.fullN.Load()

	a, b := d.claim("s1", 1), d.claim("s2", 2)
	if !a.OK() || !b.OK() {
		t.Fatalf("claims: %+v %+v", a, b)
	}
	d.waitFor("two claims", func(s *model.Snapshot) bool {
		return claimOf(s, a.Lease.LeaseID) != nil && claimOf(s, b.Lease.LeaseID) != nil
	})
	hb, err := d.store.Heartbeat(ctx, leases.FenceOf(*a.Lease), d.clock.Now())
	if err != nil || !hb.OK() {
		t.Fatalf("heartbeat: %v %+v", err, hb)
	}
	d.waitFor("renewed expiry", func(s *model.Snapshot) bool {
		c := claimOf(s, a.Lease.LeaseID)
		return c != nil && c.ExpiresAt.Equal(hb.Lease.ExpiresAt.Time)
	})
	rel, err := d.store.Release(ctx, leases.FenceOf(*b.Lease), "done", d.clock.Now())
	if err != nil || !rel.OK() {
		t.Fatalf("release: %v %+v", err, rel)
	}
	d.waitFor("released claim gone", func(s *model.Snapshot) bool { return claimOf(s, b.Lease.LeaseID) == nil })
	d.sameAsCold()
	// The first connection's own hint may read once in full (what was committed
	// before LISTEN); every transition after it is scoped.
	if n := d.live.fullN.Load(); n > full0+1 {
		t.Errorf("full reads: %d, want at most %d (every transition wrote events)", n, full0+1)
	}
	if d.live.scopedN.Load() == 0 {
		t.Error("no scoped read applied")
	}
}

// TestLivePostgresLostListenerRecovers: when the listening connection is cut, the DB's
// health says notices are not received (and that it re-reads meanwhile); a transition
// committed while nothing listens is read once the listener is back, and the note goes.
// When the database itself goes away the source is unavailable with its reason, and it
// recovers when the database is back.
func TestLivePostgresLostListenerRecovers(t *testing.T) {
	// The first reconnection waits 1 s (a twentieth of the bound): long enough to see the
	// lost state and, on a machine that is not overloaded, to commit while nothing listens.
	d, u := newLivePG(t, 20*time.Second)
	srv := pgtest.Shared(t)
	ctx := context.Background()
	name := strings.TrimPrefix(mustParse(t, u).Path, "/")
	// The server's own view of its connections: wait (polling it, a minute at most) for
	// the listener's.
	deadline := time.Now().Add(time.Minute)
	for listeners(t, srv, name) != 1 {
		if time.Now().After(deadline) {
			t.Fatal("the live model holds no listening connection")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := srv.Admin(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND application_name = 'steward listener'`, name); err != nil {
		t.Fatal(err)
	}
	s := d.waitFor("the lost listener said", func(s *model.Snapshot) bool {
		return strings.Contains(s.Sources.DB.Reason, "not listening for PostgreSQL's notices")
	})
	if s.Sources.DB.Status != model.StatusOK || !strings.Contains(s.Sources.DB.Reason, "re-read every 1h0m0s meanwhile") {
		t.Errorf("DB health while not listening: %+v", s.Sources.DB)
	}
	a := d.claim("s1", 1)
	if !a.OK() {
		t.Fatalf("claim: %+v", a)
	}
	d.waitFor("the claim committed while not listening, and the note gone", func(s *model.Snapshot) bool {
		return claimOf(s, a.Lease.LeaseID) != nil && !strings.Contains(s.Sources.DB.Reason, "not listening")
	})
	d.sameAsCold()

	// The database goes away: unavailable, with the server's reason; back: ok again.
	if err := srv.Admin(ctx, "DROP DATABASE "+name+" WITH (FORCE)"); err != nil {
		t.Fatal(err)
	}
	s = d.waitFor("the DB unavailable", func(s *model.Snapshot) bool { return s.Sources.DB.Status == model.StatusUnavailable })
	if s.Sources.DB.Reason == "" {
		t.Error("the unavailable DB gives no reason")
	}
	if err := srv.Admin(ctx, "CREATE DATABASE "+name+" TEMPLATE tmpl_steward"); err != nil {
		t.Fatal(err)
	}
	d.waitFor("the DB ok again, the claim gone with the old database", func(s *model.Snapshot) bool {
		return s.Sources.DB.Status == model.StatusOK && claimOf(s, a.Lease.LeaseID) == nil
	})
}

// listeners counts the connections to database name that the live model's listener holds.
func listeners(t *testing.T, srv *pgtest.Server, name string) int {
	t.Helper()
	ctx := context.Background()
	c, err := pgx.Connect(ctx, srv.URL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	var n int
	if err := c.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = $1 AND application_name = 'steward listener'`, name).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func mustParse(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
