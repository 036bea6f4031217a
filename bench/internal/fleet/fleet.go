// Package fleet generates the benchmark harness's workspaces: a control-plane DB, lock files,
// sessions and worktree directories for n concurrent claims, as a fleet of that size leaves
// them.
//
// It is a fixture generator, not a supervised mutation. The first claim is taken through the
// governed core (govern.Core.Run of worker.claim) so that the lock file and the rows have
// exactly the shape steward writes; the other n-1 are copies of it, written directly for
// speed: the DB rows in one transaction with plain database/sql inserts into a DB created by
// govern.InitWorkspace, and the lock files with os.WriteFile and a rename. Nothing here calls
// a source's write primitive (arch_test.go keeps that true). Use it only on a workspace it
// created.
package fleet

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"steward/govern"
	"steward/govern/actionid"
	"steward/leases"
	"steward/leases/leaserec"
	"steward/locks"
	"steward/locks/lockrec"
)

// remote, org and repo name the repository every generated claim is on.
const (
	remote = "origin"
	org    = "acme"
	repo   = "widgets"
)

// expiredEvery makes every expiredEvery-th claim (n % expiredEvery == expiredEvery/2) one
// whose lease and lock expired two minutes before Meta.Base: about 1% of a real fleet are
// claims left behind by dead or stalled workers, and they fill the orphans view.
const expiredEvery = 100

// TTL is the lease time-to-live of the author policy: a healthy claim expires TTL after its
// last heartbeat.
const TTL = 10 * time.Minute

// Meta describes a generated workspace; Generate writes it as meta.json in the root.
type Meta struct {
	N         int       `json:"n"`
	Base      time.Time `json:"base"` // the instant the fleet was written at: heartbeats are just before it
	Host      string    `json:"host"` // this host: every owner is local, so liveness is probed
	PID       int       `json:"pid"`  // the owners' pid: the generating process, alive while it runs
	LocksDir  string    `json:"locks_dir"`
	DBPath    string    `json:"db_path"`
	RepoRoot  string    `json:"repo_root"`
	AuditPath string    `json:"audit_path"`
	LockBytes int64     `json:"lock_bytes"` // total size of the lock files
}

// Workspace returns the governed core's view of the workspace.
func (m *Meta) Workspace() govern.Workspace {
	return govern.Workspace{LocksDir: m.LocksDir, DBPath: m.DBPath, RepoRoot: m.RepoRoot, Host: m.Host}
}

// LockName returns the lock file name of claim n.
func LockName(n int64) string {
	name, _ := locks.Name(lockrec.Key{Remote: remote, Org: org, Repo: repo, Issue: n})
	return name
}

// leaseID returns the lease id of claim n (claim 1's comes from the core: read meta.json).
func leaseID(n int64) string { return fmt.Sprintf("lease-fleet-%08d", n) }

// SessionID returns the worker session of claim n.
func SessionID(n int64) string { return fmt.Sprintf("prgs-author-%d-%06x", 1000+n, n) }

// Expired reports whether claim n is one of the expired ones.
func Expired(n int64) bool { return n%expiredEvery == expiredEvery/2 }

// Load reads the meta.json of a workspace written by Generate.
func Load(dir string) (*Meta, error) {
	b, err := os.ReadFile(filepath.Join(dir, "meta.json"))
	if err != nil {
		return nil, err
	}
	var m Meta
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s/meta.json: %w", dir, err)
	}
	return &m, nil
}

// times are one claim's timestamps.
type times struct {
	created, beat, expires time.Time
}

func timesOf(n int64, base time.Time) times {
	if Expired(n) {
		return times{
			created: base.Add(-40 * time.Minute),
			beat:    base.Add(-12 * time.Minute),
			expires: base.Add(-2 * time.Minute),
		}
	}
	// Heartbeats spread over the last 30 s, claims over the last 9 minutes.
	beat := base.Add(-time.Duration(n%30) * time.Second)
	return times{created: base.Add(-time.Duration(60+n%480) * time.Second), beat: beat, expires: beat.Add(TTL)}
}

// Generate writes a workspace of n claims under dir (which must not exist or be empty) and
// returns its description. The owners are this process (pid, host): keep it running while
// the workspace is measured, or liveness reads dead.
func Generate(dir string, n int) (*Meta, error) {
	if n < 1 {
		return nil, fmt.Errorf("fleet: need at least one claim, got %d", n)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	host, err := os.Hostname()
	if err != nil {
		return nil, err
	}
	m := &Meta{N: n, Base: time.Now().UTC().Truncate(time.Second), Host: host, PID: os.Getpid(),
		LocksDir: filepath.Join(abs, "locks"), DBPath: filepath.Join(abs, "control_plane.sqlite3"),
		RepoRoot: filepath.Join(abs, "repo"), AuditPath: filepath.Join(abs, "audit.jsonl")}
	ws := m.Workspace()
	if err := govern.InitWorkspace(ws); err != nil {
		return nil, err
	}
	tpl, lease, err := m.templateClaim()
	if err != nil {
		return nil, err
	}
	if err := m.insertRows(lease); err != nil {
		return nil, err
	}
	if err := m.writeLocks(tpl); err != nil {
		return nil, err
	}
	b, _ := json.MarshalIndent(m, "", "  ")
	return m, os.WriteFile(filepath.Join(abs, "meta.json"), b, 0o600)
}

// templateClaim claims item 1 through the governed core and returns its lock record and lease.
func (m *Meta) templateClaim() (lockrec.Record, leaserec.Lease, error) {
	audit, err := govern.OpenAudit(m.AuditPath, nil)
	if err != nil {
		return lockrec.Record{}, leaserec.Lease{}, err
	}
	defer audit.Close()
	clock := m.Base
	core := govern.New(m.Workspace(), audit, govern.Options{Actor: govern.LocalActor(govern.RoleOperator, "bench"),
		Now: func() time.Time { return clock }})
	defer core.Close()
	wt := worktree(m.RepoRoot, 1)
	if err := os.MkdirAll(wt, 0o700); err != nil {
		return lockrec.Record{}, leaserec.Lease{}, err
	}
	_, out, err := core.Run(context.Background(), govern.Request{Action: actionid.Claim,
		Target: govern.Target{
			Session: SessionID(1),
			Item:    &govern.Item{Remote: remote, Org: org, Repo: repo, Kind: "issue", Number: 1},
		},
		Params: govern.ClaimParams{Role: "author", Profile: "author", PID: fmt.Sprint(m.PID), Username: "bot-1",
			Title: title(1), Branch: "feat/issue-1", Worktree: wt}}, "")
	if err != nil {
		return lockrec.Record{}, leaserec.Lease{}, err
	}
	if out.Result != govern.ResultSucceeded {
		return lockrec.Record{}, leaserec.Lease{}, fmt.Errorf(
			"fleet: template claim %s: %s %s",
			out.Result,
			out.Code,
			out.Message,
		)
	}
	e := locks.ReadFile(m.LocksDir, LockName(1))
	if e.Unreadable != nil || e.Missing {
		return lockrec.Record{}, leaserec.Lease{}, fmt.Errorf("fleet: template lock unreadable")
	}
	r, err := leases.OpenReader(leases.Target{Loc: m.DBPath})
	if err != nil {
		return lockrec.Record{}, leaserec.Lease{}, err
	}
	defer r.Close()
	l, found, err := r.LeaseByID(context.Background(), e.Record.LeaseID)
	if err != nil || !found {
		return lockrec.Record{}, leaserec.Lease{}, fmt.Errorf(
			"fleet: template lease %s: found %v, %v",
			e.Record.LeaseID,
			found,
			err,
		)
	}
	return e.Record, l, nil
}

func worktree(root string, n int64) string {
	return filepath.Join(root, "branches", fmt.Sprintf("issue-%d", n))
}

func title(n int64) string { return fmt.Sprintf("Fleet-scale fixture issue %d", n) }

func taskSession() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "tsk-author-" + hex.EncodeToString(b[:])
}
