package live

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"steward/leases"
	"steward/leases/leaserec"
	"steward/leases/leasestest"
	"steward/leases/seedtest"
	"steward/model"
)

// liveDB is a Live over an empty locks directory and a migrated DB, with the
// store that writes the DB as the supervised workers would.
type liveDB struct {
	t     *testing.T
	ws    Workspace
	live  *Model
	store leases.Store
	probe Probe
	clock *clock
}

func newLiveDB(t *testing.T, path string, resync time.Duration) *liveDB {
	t.Helper()
	dir := t.TempDir()
	ws := Workspace{LocksDir: filepath.Join(dir, "locks"), DBPath: path, RepoRoot: filepath.Join(dir, "repo")}
	if err := os.MkdirAll(ws.LocksDir, 0o700); err != nil {
		t.Fatal(err)
	}
	d := &liveDB{t: t, ws: ws, clock: &clock{t: leasestest.Now}, probe: Probe{Host: "here"}}
	if st, err := leases.OpenReadWrite(path, leases.StoreOptions{}); err == nil { // opening writes nothing, on any DB
		t.Cleanup(func() { st.Close() })
		d.store = st
	}
	d.live = New(ws, Options{Now: d.clock.Now, Probe: &d.probe, Resync: resync, ProbeEvery: time.Hour})
	if err := d.live.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.live.Close() })
	return d
}

// waitFor waits for a published snapshot satisfying ok.
func (d *liveDB) waitFor(what string, ok func(*model.Snapshot) bool) *model.Snapshot {
	d.t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		if s := d.live.Current(); s != nil && ok(s) {
			return s
		}
		select {
		case <-d.live.Snapshots():
		case <-deadline:
			d.t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// sameAsCold checks that Live's current snapshot is the one a cold read of
// every source derives (scan times aside).
func (d *liveDB) sameAsCold() {
	d.t.Helper()
	cold := model.Build(Load(context.Background(), d.ws, d.probe, d.clock.Now()), model.Config{}, d.clock.Now())
	got, want := canon(d.t, d.live.Current()), canon(d.t, cold)
	if got != want {
		d.t.Fatalf("live snapshot differs from a cold read:\nlive: %s\ncold: %s", got, want)
	}
}

func canon(t *testing.T, s *model.Snapshot) string {
	c := *s
	for _, h := range []*model.SourceHealth{&c.Sources.Locks, &c.Sources.DB, &c.Sources.Gitea} {
		h.ScannedAt, h.ScanDuration = time.Time{}, 0
	}
	b, err := json.Marshal(&c)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func claimOf(s *model.Snapshot, leaseID string) *model.Claim {
	for _, c := range s.Claims {
		if c.LeaseID == leaseID {
			return c
		}
	}
	return nil
}

func (d *liveDB) claim(session string, n int64) leases.Outcome {
	d.t.Helper()
	out, err := d.store.Claim(context.Background(), leases.ClaimRequest{Session: leases.SessionInfo{SessionID: session, Role: "author"},
		Work: leasestest.Work(leaserec.KindIssue, n), TaskClass: leaserec.ClassAuthorIssueWork,
		Provenance: map[string]any{"source": "test"}}, d.clock.Now())
	if err != nil {
		d.t.Fatal(err)
	}
	return out
}

// Steward's transitions write events naming their work item: each commit is
// applied by a scoped read, and the result is what a cold read derives. A
// commit that writes no event is still seen, by a full read.
func TestLiveScopedReads(t *testing.T) {
	d := newLiveDB(t, leasestest.NewDB(t, nil, nil), time.Hour)
	ctx := context.Background()
	full0 := d.live.fullN.Load()

	a := d.claim("s1", 1)
	b := d.claim("s2", 2)
	if !a.OK() || !b.OK() {
		t.Fatalf("claims: %+v %+v", a, b)
	}
	d.waitFor("two claims", func(s *model.Snapshot) bool {
		return claimOf(s, a.Lease.LeaseID) != nil && claimOf(s, b.Lease.LeaseID) != nil
	})
	d.sameAsCold()

	d.clock.Add(time.Minute)
	hb, err := d.store.Heartbeat(ctx, leases.FenceOf(*a.Lease), d.clock.Now())
	if err != nil || !hb.OK() {
		t.Fatalf("heartbeat: %v %+v", err, hb)
	}
	d.waitFor("renewed expiry", func(s *model.Snapshot) bool {
		c := claimOf(s, a.Lease.LeaseID)
		return c != nil && c.ExpiresAt.Equal(hb.Lease.ExpiresAt.Time)
	})
	d.sameAsCold()

	if ref := d.claim("s3", 1); ref.OK() {
		t.Fatalf("second claim on #1 applied: %+v", ref)
	}
	d.waitFor("claim-refused contention", func(s *model.Snapshot) bool {
		for _, c := range s.Contention {
			if c.Kind == model.ContentionClaimRefused {
				return true
			}
		}
		return false
	})
	d.sameAsCold()

	rel, err := d.store.Release(ctx, leases.FenceOf(*b.Lease), "done", d.clock.Now())
	if err != nil || !rel.OK() {
		t.Fatalf("release: %v %+v", err, rel)
	}
	d.waitFor("released claim gone", func(s *model.Snapshot) bool { return claimOf(s, b.Lease.LeaseID) == nil })
	d.sameAsCold()
	if n := d.live.fullN.Load(); n != full0 {
		t.Errorf("full reads: %d, want %d (every commit wrote events)", n, full0)
	}
	if d.live.scopedN.Load() == 0 {
		t.Error("no scoped read applied")
	}

	// A foreign writer: no event. data_version moves, no event arrives: a full read.
	exp := d.clock.Now().Add(3 * time.Hour)
	foreign(t, d.ws.DBPath, `UPDATE leases SET expires_at = '`+leaserec.FormatTime(exp)+`' WHERE lease_id = '`+a.Lease.LeaseID+`'`)
	d.waitFor("foreign update", func(s *model.Snapshot) bool {
		c := claimOf(s, a.Lease.LeaseID)
		return c != nil && c.ExpiresAt.Equal(exp)
	})
	d.sameAsCold()
	if n := d.live.fullN.Load(); n <= full0 {
		t.Errorf("full reads: %d after a commit without events, want > %d", n, full0)
	}
}

// A transaction that writes an event about one item and changes another
// item's lease without an event: the scoped read misses the second change,
// and the periodic resync, which reads in full after a scoped read, heals it.
func TestLiveMixedCommitHealedByResync(t *testing.T) {
	d := newLiveDB(t, leasestest.NewDB(t, nil, nil), 700*time.Millisecond)
	a, b := d.claim("s1", 1), d.claim("s2", 2)
	d.waitFor("two claims", func(s *model.Snapshot) bool {
		return claimOf(s, a.Lease.LeaseID) != nil && claimOf(s, b.Lease.LeaseID) != nil
	})
	d.sameAsCold()
	expA, expB := d.clock.Now().Add(2*time.Hour), d.clock.Now().Add(3*time.Hour)
	foreign(t, d.ws.DBPath,
		`UPDATE leases SET expires_at = '`+leaserec.FormatTime(expA)+`' WHERE lease_id = '`+a.Lease.LeaseID+`'`,
		`INSERT INTO events(work_item_id, event_type, message, created_at, session_id, detail_json)
			VALUES(`+itoa(a.Lease.WorkItemID)+`, 'lease.renew', 'lease renewed', '`+leaserec.FormatTime(d.clock.Now())+`', 's1', '{"lease_id":"`+a.Lease.LeaseID+`"}')`,
		`UPDATE leases SET expires_at = '`+leaserec.FormatTime(expB)+`' WHERE lease_id = '`+b.Lease.LeaseID+`'`)
	d.waitFor("both expiries", func(s *model.Snapshot) bool {
		ca, cb := claimOf(s, a.Lease.LeaseID), claimOf(s, b.Lease.LeaseID)
		return ca != nil && cb != nil && ca.ExpiresAt.Equal(expA) && cb.ExpiresAt.Equal(expB)
	})
	d.sameAsCold()
}

// On a seed-shaped events table (no session_id, no detail_json) events still
// name their work item: commits are applied by scoped reads, and the DB reads
// ok in both paths, the absent columns noted. Rows with undecodable values are
// noted the same way in both paths and make nothing partial.
func TestLiveScopedReadsOnSeedEvents(t *testing.T) {
	path := leasestest.NewDB(t, []leasestest.Session{{SessionID: "s1", Role: "author"}},
		[]leasestest.Lease{{LeaseID: "lease-1", SessionID: "s1", Work: leasestest.Work(leaserec.KindIssue, 1),
			ExpiresAt: leaserec.FormatTime(leasestest.Now.Add(time.Hour)), TaskClass: leaserec.ClassAuthorIssueWork}})
	leasestest.Insert(t, path, []leasestest.Session{{SessionID: "s2", Role: "author"}},
		[]leasestest.Lease{{LeaseID: "lease-2", SessionID: "s2", Work: leasestest.Work(leaserec.KindIssue, 2),
			ExpiresAt: leaserec.FormatTime(leasestest.Now.Add(time.Hour)), TaskClass: leaserec.ClassAuthorIssueWork}})
	// Two rows with undecodable values: the full read counts two, a scoped
	// read of one counts one — the same degradation.
	foreign(t, path, `ALTER TABLE events DROP COLUMN session_id`, `ALTER TABLE events DROP COLUMN detail_json`,
		`UPDATE leases SET provenance_json = 'not json'`)
	d := newLiveDB(t, path, time.Hour)
	d.waitFor("the lease", func(s *model.Snapshot) bool { return claimOf(s, "lease-1") != nil })
	full0 := d.live.fullN.Load()
	var item int64
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.QueryRow(`SELECT work_item_id FROM leases WHERE lease_id = 'lease-1'`).Scan(&item); err != nil {
		t.Fatal(err)
	}
	exp := d.clock.Now().Add(2 * time.Hour)
	foreign(t, path, `UPDATE leases SET expires_at = '`+leaserec.FormatTime(exp)+`' WHERE lease_id = 'lease-1'`,
		`INSERT INTO events(work_item_id, event_type, message, created_at) VALUES(`+itoa(item)+`, 'lease.renew', 'lease renewed', '`+leaserec.FormatTime(d.clock.Now())+`')`)
	s := d.waitFor("renewed", func(s *model.Snapshot) bool {
		c := claimOf(s, "lease-1")
		return c != nil && c.ExpiresAt.Equal(exp)
	})
	if h := s.Sources.DB; h.Status != model.StatusOK || h.Partial || !strings.Contains(strings.Join(h.Notes, "|"), "events.session_id") ||
		!strings.Contains(strings.Join(h.Notes, "|"), "undecodable") {
		t.Errorf("db source = %+v, want ok with the absent columns and the undecodable rows noted", h)
	}
	d.sameAsCold()
	if n := d.live.fullN.Load(); n != full0 {
		t.Errorf("full reads: %d, want %d", n, full0)
	}
}

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// foreign commits stmts in one transaction, as another writer would.
func foreign(t *testing.T, path string, stmts ...string) {
	t.Helper()
	db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range stmts {
		if _, err := tx.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// The sessions table is never trimmed: the model lists every session that may be live and
// the most recent others, and counts the ended ones it leaves out — live and cold alike.
func TestSessionsBoundedAndCounted(t *testing.T) {
	ss := []leasestest.Session{{SessionID: "live-first", Status: "active"}}
	for i := range leases.DefaultRecentEnded + 5 {
		ss = append(ss, leasestest.Session{SessionID: "ended-" + strconv.Itoa(i), Status: "ended"})
	}
	d := newLiveDB(t, leasestest.NewDB(t, ss, nil), time.Hour)
	s := d.waitFor("the first read", func(s *model.Snapshot) bool { return s.Sources.DB.Usable() })
	if s.SessionsOmitted != 5 || len(s.Sessions) != leases.DefaultRecentEnded+1 {
		t.Fatalf("%d sessions listed, %d omitted; want %d and 5", len(s.Sessions), s.SessionsOmitted, leases.DefaultRecentEnded+1)
	}
	for _, x := range s.Sessions {
		if x.SessionID == "ended-0" || x.SessionID == "ended-4" {
			t.Fatalf("an old ended session is listed: %s", x.SessionID)
		}
	}
	d.sameAsCold()
}

// TestLiveOnSeedDB: the live model watching a DB the supervised system writes (seed
// names only, rollback journal, ACTIVE in capitals, events without a session) reads it
// ok and complete, follows a foreign commit by its event, agrees with a cold read, and
// never changes a byte of the file or its journal.
func TestLiveOnSeedDB(t *testing.T) {
	dir := t.TempDir()
	db := seedtest.NewAt(t, filepath.Join(dir, "control_plane.sqlite3"), seedtest.Options{})
	db.AddSession(seedtest.Session{SessionID: "s1", Role: "author", Status: "Active", LastHeartbeatAt: seedtest.ISO(leasestest.Now)})
	db.AddLease(seedtest.Lease{LeaseID: "lease-1", SessionID: "s1", Role: "author", Status: "ACTIVE", Item: seedtest.Issue(1),
		CreatedAt: seedtest.Naive(leasestest.Now), ExpiresAt: seedtest.ISO(leasestest.Now.Add(time.Hour))})
	d := newLiveDB(t, db.Path, time.Hour)
	s := d.waitFor("the lease", func(s *model.Snapshot) bool { return claimOf(s, "lease-1") != nil })
	if h := s.Sources.DB; h.Status != model.StatusOK || h.Partial {
		t.Fatalf("db source %+v", h)
	}
	it := seedtest.Issue(2)
	db.AddLease(seedtest.Lease{LeaseID: "lease-2", SessionID: "s1", Role: "author", Status: "Active", Item: it,
		CreatedAt: seedtest.Naive(leasestest.Now), ExpiresAt: seedtest.Naive(leasestest.Now.Add(-time.Minute))})
	db.AddEvent(seedtest.Event{Item: &it, Type: "lease.claim", Message: "lease claimed", CreatedAt: seedtest.Naive(leasestest.Now)})
	before := seedtest.Fingerprint(t, db.Path)
	// Two foreign commits (the lease, then its event): wait until both are read.
	s = d.waitFor("the second lease and its event", func(s *model.Snapshot) bool { return claimOf(s, "lease-2") != nil && len(s.Activity) == 1 })
	if len(orphansOf(s, model.OrphanActiveLeasePastExpiry)) != 1 {
		t.Fatalf("orphans %v", kinds(s))
	}
	d.sameAsCold()
	if seedtest.Fingerprint(t, db.Path) != before {
		t.Fatal("the live model changed the DB or its journal")
	}
	// A commit that writes only an event (the supervised system records its own, e.g.
	// session_checkpoint_stage_change) changes no row an item derives from: the Activity
	// view shows it all the same. Before the fix the model published nothing for it.
	one := seedtest.Issue(1)
	db.AddEvent(seedtest.Event{Item: &one, Type: "session_checkpoint_stage_change", Message: "implementing -> testing",
		CreatedAt: seedtest.ISO(leasestest.Now)})
	d.waitFor("the event-only commit", func(s *model.Snapshot) bool { return len(s.Activity) == 2 })
	d.sameAsCold()
}
