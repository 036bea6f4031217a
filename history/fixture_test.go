package history_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"steward/govern"
	"steward/govern/actionid"
	"steward/history"
	"steward/history/gather"
	"steward/leases"
	"steward/leases/seedtest"
	"steward/locks"
	"steward/locks/lockrec"
)

// clock is a settable fake clock shared by the governed core and the reads.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// T0 is when every fixture's history begins.
var T0 = seedtest.Now

func at(d time.Duration) time.Time { return T0.Add(d) }

// fleet is a real workspace (lock directory, SQLite DB, audit log) whose history is made
// through the governed core with a fake clock.
type fleet struct {
	t     *testing.T
	dir   string
	ws    govern.Workspace
	audit *govern.AuditLog
	clock *clock
	core  *govern.Core
	lease map[string]string // name → lease id
}

func newFleet(t *testing.T, seed bool) *fleet {
	t.Helper()
	dir := t.TempDir()
	host, _ := os.Hostname()
	ws := govern.Workspace{LocksDir: filepath.Join(dir, "locks"), DBPath: filepath.Join(dir, "db", "control_plane.sqlite3"),
		RepoRoot: filepath.Join(dir, "repo"), Env: func(string) (string, bool) { return "", false }, Host: host}
	if seed {
		for _, d := range []string{ws.LocksDir, filepath.Join(ws.RepoRoot, "branches"), filepath.Dir(ws.DBPath)} {
			if err := os.MkdirAll(d, 0o700); err != nil {
				t.Fatal(err)
			}
		}
		seedtest.NewAt(t, ws.DBPath, seedtest.Options{})
	} else if err := govern.InitWorkspace(ws); err != nil {
		t.Fatal(err)
	}
	log, err := govern.OpenAudit(filepath.Join(dir, "state", "audit.jsonl"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	f := &fleet{t: t, dir: dir, ws: ws, audit: log, clock: &clock{t: T0}, lease: map[string]string{}}
	f.core = govern.New(ws, log, govern.Options{Actor: govern.Actor{OSUser: "tester", Host: host, Role: govern.RoleAdmin, GiteaLogin: "maint"},
		Now: f.clock.Now})
	t.Cleanup(func() { f.core.Close() })
	return f
}

func item(n int64) *govern.Item {
	return &govern.Item{Remote: "origin", Org: "acme", Repo: "widgets", Kind: "issue", Number: n}
}

func hitem(n int64) history.Item { return history.Item{Org: "acme", Repo: "widgets", Number: n} }

// run applies one request at instant d and returns its outcome.
func (f *fleet) run(d time.Duration, req govern.Request) govern.Outcome {
	f.t.Helper()
	f.clock.Set(at(d))
	pv, err := f.core.Preview(context.Background(), req)
	if err != nil {
		f.t.Fatalf("%s: %v", req.Action, err)
	}
	return f.core.Apply(context.Background(), pv, pv.ConfirmPhrase)
}

func (f *fleet) claim(d time.Duration, name, session string, n int64) govern.Outcome {
	f.t.Helper()
	return f.claimPID(d, name, session, n, os.Getpid())
}

// claimPID claims with pid as the owner process (a dead one makes the lock retirable).
func (f *fleet) claimPID(d time.Duration, name, session string, n int64, pid int) govern.Outcome {
	f.t.Helper()
	out := f.run(d, govern.Request{Action: actionid.Claim, Target: govern.Target{Item: item(n), Session: session},
		Params: govern.ClaimParams{PID: strconv.Itoa(pid), Role: "author", Username: "bot-" + session}})
	if out.Result == govern.ResultSucceeded {
		f.lease[name] = out.Detail["lease_id"]
	}
	return out
}

func (f *fleet) must(out govern.Outcome, want govern.Result) {
	f.t.Helper()
	if out.Result != want {
		f.t.Fatalf("outcome %s (%s: %s), want %s", out.Result, out.Code, out.Message, want)
	}
}

func (f *fleet) heartbeat(d time.Duration, name, session string) {
	f.t.Helper()
	f.must(f.run(d, govern.Request{Action: actionid.Heartbeat, Target: govern.Target{LeaseID: f.lease[name], Session: session}}), govern.ResultSucceeded)
}

func (f *fleet) release(d time.Duration, name, session string) {
	f.t.Helper()
	f.must(f.run(d, govern.Request{Action: actionid.Release, Target: govern.Target{LeaseID: f.lease[name], Session: session}}), govern.ResultSucceeded)
}

func (f *fleet) reclaim(d time.Duration, name string) {
	f.t.Helper()
	f.must(f.run(d, govern.Request{Action: actionid.ReclaimExpired, Target: govern.Target{LeaseID: f.lease[name]}}), govern.ResultSucceeded)
}

func (f *fleet) retire(d time.Duration, n int64) {
	f.t.Helper()
	name, _ := locks.Name(lockrec.Key{Remote: "origin", Org: "acme", Repo: "widgets", Issue: n})
	f.must(f.run(d, govern.Request{Action: actionid.RetireLock, Target: govern.Target{LockFile: name}}), govern.ResultSucceeded)
}

func (f *fleet) sources() gather.Sources {
	return gather.Sources{LocksDir: f.ws.LocksDir, DB: leases.Target{Loc: f.ws.DBPath}, AuditPath: f.audit.Path()}
}

// read gathers the evidence at instant d.
func (f *fleet) read(d time.Duration, it history.Item) *history.Evidence {
	f.t.Helper()
	now := at(d)
	return gather.Read(context.Background(), f.sources(), gather.Options{Item: it, Now: func() time.Time { return now }})
}

// hash fingerprints every file of the workspace's sources: the lock directory with
// retired/, the DB with its journal and WAL, and the audit log (SQLite's -shm is shared
// memory, not the source's content).
func (f *fleet) hash() string {
	f.t.Helper()
	var lines []string
	for _, root := range []string{f.ws.LocksDir, filepath.Dir(f.ws.DBPath), filepath.Dir(f.audit.Path())} {
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || strings.HasSuffix(p, "-shm") {
				return nil
			}
			b, _ := os.ReadFile(p)
			fi, _ := os.Lstat(p)
			h := sha256.Sum256(b)
			lines = append(lines, fmt.Sprintf("%s %s %v %v", p, hex.EncodeToString(h[:]), fi.Mode(), fi.ModTime().UnixNano()))
			return nil
		})
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// standard makes the history every table test reads:
//
//	+0   s1 claims #1 (A)           +1m  s2's claim of #1 is refused
//	+1m  s4 claims #3 (D)           +2m  s1 heartbeats A
//	+3m  s2 claims #2 (B)           +5m  s1 releases A
//	+20m maint reclaims B (expired at +13m) and retires its lock
//	+21m s3 claims #2 (C)           D is never renewed: past its expiry from +11m
func standard(t *testing.T, seed bool) *fleet {
	f := newFleet(t, seed)
	f.must(f.claim(0, "A", "s1", 1), govern.ResultSucceeded)
	f.must(f.claim(time.Minute, "", "s2", 1), govern.ResultRefused)
	f.must(f.claim(time.Minute, "D", "s4", 3), govern.ResultSucceeded)
	f.heartbeat(2*time.Minute, "A", "s1")
	f.must(f.claimPID(3*time.Minute, "B", "s2", 2, deadPID(t)), govern.ResultSucceeded)
	f.release(5*time.Minute, "A", "s1")
	f.reclaim(20*time.Minute, "B")
	f.retire(20*time.Minute, 2)
	f.must(f.claim(21*time.Minute, "C", "s3", 2), govern.ResultSucceeded)
	return f
}

// deadPID returns the pid of a process that has exited and been reaped.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}
