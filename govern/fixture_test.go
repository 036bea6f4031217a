package govern

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"steward/gitea"
	"steward/gitea/fakegitea"
	"steward/leases"
	"steward/leases/leaserec"
	"steward/leases/leasestest"
	"steward/leases/pgtest"
	"steward/locks"
	"steward/locks/lockrec"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
)

func TestMain(m *testing.M) { pgtest.Main(m) }

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

// fixture is a real workspace in a temp dir: lock files, a migrated SQLite DB, a repo root
// with branches/, an audit log, and optionally an in-process Gitea.
type fixture struct {
	t     *testing.T
	dir   string
	ws    Workspace
	audit *AuditLog
	clock *clock
	core  *Core
	repo  *fakegitea.Repo
	// fake is the in-process Gitea itself (withGitea), for its faults.
	fake *fakegitea.Server
	// giteaURL is the in-process Gitea's address (withGitea), for child processes.
	giteaURL string
	// pg is set when the control-plane DB is PostgreSQL, whose transitions judge by the
	// database's clock; shift moves the fixture's instants (around now0) to that clock.
	pg    bool
	shift time.Duration
}

// backends are the control-plane DB backends the tests that must hold on both run on.
var backends = []string{"sqlite", "postgres"}

const testToken = "tok-0123456789abcdef-secret"

func newFixture(t *testing.T, role Role) *fixture {
	t.Helper()
	return newFixtureOn(t, role, "sqlite")
}

// newFixtureOn is newFixture with the control-plane DB on backend ("sqlite" or
// "postgres": a fresh database on the test binary's server).
func newFixtureOn(t *testing.T, role Role, backend string) *fixture {
	t.Helper()
	dir := t.TempDir()
	host, _ := os.Hostname()
	ws := Workspace{
		LocksDir: filepath.Join(dir, "locks"),
		DBPath:   filepath.Join(dir, "db", "control_plane.sqlite3"),
		RepoRoot: filepath.Join(dir, "repo"),
		Env:      func(string) (string, bool) { return "", false },
		Host:     host,
	}
	if backend == "postgres" {
		ws.DBPath = pgtest.NewDBFrom(t, "steward", func(url string) error {
			_, err := leases.InitPG(context.Background(), leases.Target{Loc: url})
			return err
		})
	}
	if err := InitWorkspace(ws); err != nil {
		t.Fatal(err)
	}
	log, err := OpenAudit(filepath.Join(dir, "audit", "audit.jsonl"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	f := &fixture{t: t, dir: dir, ws: ws, audit: log, clock: &clock{t: leasestest.Now}}
	if backend == "postgres" {
		r, err := leases.OpenPGReader(context.Background(), ws.DBTarget())
		if err != nil {
			t.Fatal(err)
		}
		dbNow, err := r.Clock(context.Background())
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		f.pg, f.shift = true, dbNow.Sub(leasestest.Now)
		f.clock.t = dbNow
	}
	f.core = f.newCore(role, false)
	return f
}

func (f *fixture) newCore(role Role, readOnly bool) *Core {
	c := New(f.ws, f.audit, Options{Actor: Actor{OSUser: "tester", Host: f.ws.Host, Role: role, GiteaLogin: "maint"}, ReadOnly: readOnly, Now: f.clock.Now})
	f.t.Cleanup(func() { c.Close() })
	return c
}

// withGitea serves an in-process Gitea subset with repo acme/widgets and wires a client.
func (f *fixture) withGitea() {
	fake := fakegitea.New()
	srv := httptest.NewServer(fake)
	f.t.Cleanup(srv.Close)
	fake.SetBaseURL(srv.URL)
	fake.AddUser("maint", testToken)
	f.fake, f.repo = fake, fake.CreateRepo("acme", "widgets")
	f.giteaURL = srv.URL
	f.repo.CreateLabel("status:blocked-pending-clarification", "d93f0b")
	cl, err := gitea.New(gitea.Config{Login: gitea.Login{URL: srv.URL, Token: gitea.NewToken(testToken)}, Owner: "acme", Repo: "widgets", RequestTimeout: 5 * time.Second})
	if err != nil {
		f.t.Fatal(err)
	}
	f.ws.Gitea = cl
	f.core = f.newCore(f.core.actor.Role, false)
}

func (f *fixture) db() *sql.DB {
	driver, dsn := "sqlite", f.ws.DBPath+"?_pragma=busy_timeout(5000)"
	if f.pg {
		driver, dsn = "pgx", f.ws.DBPath
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { db.Close() })
	return db
}

func (f *fixture) exec(q string, args ...any) {
	f.t.Helper()
	if _, err := f.db().Exec(q, args...); err != nil {
		f.t.Fatalf("%s: %v", q, err)
	}
}

func (f *fixture) insert(ls ...leasestest.Lease) {
	f.t.Helper()
	var ss []leasestest.Session
	seen := map[string]bool{}
	for _, l := range ls {
		if !seen[l.SessionID] {
			seen[l.SessionID] = true
			ss = append(ss, leasestest.Session{SessionID: l.SessionID, Role: "author", PID: l.OwnerPID, Host: l.OwnerHost})
		}
	}
	if f.pg {
		for i := range ls {
			for _, p := range []*string{&ls[i].CreatedAt, &ls[i].ExpiresAt, &ls[i].LastHeartbeatAt} {
				if ts := leaserec.ParseTimestamp(*p); ts.OK() {
					*p = leaserec.FormatTime(ts.Time.Add(f.shift))
				}
			}
		}
		for i := range ss {
			ss[i].StartedAt = leaserec.FormatTime(leasestest.Now.Add(f.shift))
			ss[i].LastHeartbeatAt = ss[i].StartedAt
		}
	}
	leasestest.Insert(f.t, f.ws.DBPath, ss, ls)
}

func (f *fixture) lease(id string) leaserec.Lease {
	f.t.Helper()
	r, err := leases.OpenReader(f.ws.DBTarget())
	if err != nil {
		f.t.Fatal(err)
	}
	defer r.Close()
	l, ok, err := r.LeaseByID(context.Background(), id)
	if err != nil || !ok {
		f.t.Fatalf("lease %s: found=%v err=%v", id, ok, err)
	}
	return l
}

// writeLock writes a lock record straight to disk (test setup, not a governed write).
func (f *fixture) writeLock(name string, rec lockrec.Record) {
	f.t.Helper()
	if _, err := locks.WriteCAS(f.ws.LocksDir, name, locks.ExpectAbsent(), rec); err != nil {
		f.t.Fatal(err)
	}
}

// state hashes every byte of the lock directory (recursively), the DB and its WAL, and
// the audit log, and dumps every DB row, so a test can prove a preview wrote nothing.
func (f *fixture) state() string {
	f.t.Helper()
	var b strings.Builder
	add := func(root string) {
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || strings.HasSuffix(p, "-shm") {
				return nil
			}
			data, _ := os.ReadFile(p)
			h := sha256.Sum256(data)
			fmt.Fprintf(&b, "%s %s\n", p, hex.EncodeToString(h[:]))
			return nil
		})
	}
	db := f.db()
	for _, tbl := range []string{"sessions", "work_items", "leases", "assignments", "events", "schema_meta"} {
		rows, err := db.Query("SELECT * FROM " + tbl + " ORDER BY 1")
		if err != nil {
			f.t.Fatal(err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			_ = rows.Scan(ptrs...)
			fmt.Fprintf(&b, "%s %v\n", tbl, vals)
		}
		rows.Close()
	}
	add(f.ws.LocksDir)
	if !f.pg {
		add(filepath.Dir(f.ws.DBPath))
	}
	add(filepath.Dir(f.audit.Path()))
	return b.String()
}

// deadPID returns the pid of a process that has exited and been reaped.
func deadPID(t *testing.T) int64 {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return int64(cmd.Process.Pid)
}

// records reads the audit log.
func (f *fixture) records() []Record {
	f.t.Helper()
	recs, finds, err := ReadAudit(f.audit.Path())
	if err != nil || len(finds) > 0 {
		f.t.Fatalf("audit: %v %v", err, finds)
	}
	return recs
}

func countKinds(recs []Record) map[RecordKind]int {
	m := map[RecordKind]int{}
	for _, r := range recs {
		m[r.Kind]++
	}
	return m
}

var _ = bytes.Equal
