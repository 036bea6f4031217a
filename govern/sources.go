package govern

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"time"

	"steward/leases"
	"steward/leases/leaserec"
	"steward/locks"
	"steward/locks/lockrec"
)

// sources holds the core's handles on the stores, opened lazily and shared by every
// action: one read-only reader for previews, one read-write store for transitions.
type sources struct {
	mu     sync.Mutex
	reader leases.Reader
	store  leases.Store
	locks  *locks.Index
}

func (c *Core) policies() leaserec.PolicySet { return leaserec.LoadPolicies(c.ws.env()) }

// reader returns the read-only DB handle. A missing DB is an error (missing authority),
// never an empty inventory.
func (c *Core) reader() (leases.Reader, error) {
	c.src.mu.Lock()
	defer c.src.mu.Unlock()
	if c.src.reader != nil {
		return c.src.reader, nil
	}
	r, err := leases.OpenReader(c.ws.DBTarget())
	if err != nil {
		return nil, err
	}
	c.src.reader = r
	return r, nil
}

// store returns the read-write DB handle; transitions call the crash-test step hook
// between their writes and their COMMIT.
func (c *Core) store() (leases.Store, error) {
	c.src.mu.Lock()
	defer c.src.mu.Unlock()
	if c.src.store != nil {
		return c.src.store, nil
	}
	s, err := leases.OpenStore(c.ws.DBTarget(), leases.StoreOptions{
		Policies:     c.policies(),
		BeforeCommit: func() { c.doStep("before-commit") },
	})
	if err != nil {
		return nil, err
	}
	c.src.store = s
	return s, nil
}

// dbFailed is the effect of a transition the store could not finish: unknown when its
// writes may have reached the database (leases.ErrMaybeSent: the connection broke once
// they or the COMMIT were sent, so it may have committed with only the answer lost; the
// verifier settles it from the attempt's mark), failed with nothing done otherwise.
func dbFailed(err error) effect {
	return effect{sent: errors.Is(err, leases.ErrMaybeSent), err: err}
}

// pendingOnDB lists the database sessions still inside a transaction of attempt: on
// PostgreSQL a transaction whose client gave up on the answer runs on until the server
// notices, and a COMMIT on its way may still land (leases.Pending). None on SQLite.
func (c *Core) pendingOnDB(ctx context.Context, attempt string) ([]leases.Backend, error) {
	r, err := c.reader()
	if err != nil {
		return nil, err
	}
	p, ok := r.(leases.Pending)
	if !ok {
		return nil, nil
	}
	return p.Pending(ctx, attempt)
}

// leaseNow is the instant a preview judges lease expiry and freshness at: the DB's clock
// when its backend fences against it (PostgreSQL, leases.Clock), so that the preview
// refuses as the apply will; else the core's clock.
func (c *Core) leaseNow(ctx context.Context) time.Time {
	if r, err := c.reader(); err == nil {
		if ck, ok := r.(leases.Clock); ok {
			if t, err := ck.Clock(ctx); err == nil {
				return t
			}
		}
	}
	return c.now()
}

// schemaRefusal refuses op when the DB lacks a column op cannot be done safely without:
// the same guard (and code, schema_unsupported) the transition runs inside its
// transaction, so a preview refuses exactly as the apply would and a DB steward did not
// create is never half-written.
func (c *Core) schemaRefusal(ctx context.Context, op leases.Op) (*Refusal, error) {
	r, err := c.reader()
	if err != nil {
		return nil, err
	}
	v, err := r.Supports(ctx, op)
	if err != nil {
		c.dropHandles()
		return nil, err
	}
	return verdict(v), nil
}

// dropHandles closes the DB handles so the next use re-opens them (the file may have
// been replaced).
func (c *Core) dropHandles() {
	c.src.mu.Lock()
	defer c.src.mu.Unlock()
	if c.src.reader != nil {
		c.src.reader.Close()
		c.src.reader = nil
	}
	if c.src.store != nil {
		c.src.store.Close()
		c.src.store = nil
	}
}

// Close releases the core's DB handles. The audit log belongs to the caller.
func (c *Core) Close() error {
	c.dropHandles()
	return nil
}

// lockIndex returns the index of the live locks by item, shared by the core's actions.
func (c *Core) lockIndex() *locks.Index {
	c.src.mu.Lock()
	defer c.src.mu.Unlock()
	if c.src.locks == nil {
		c.src.locks = locks.NewIndex(c.ws.LocksDir)
	}
	return c.src.locks
}

// lockWriter returns the lock-file writer, calling the crash-test hook at every step. The
// time it stamps into a lock (an archive's archived_at) is read from the clock the lease
// fields of the same record come from: the DB's on PostgreSQL (leaseNow), where every
// lease timestamp is the database's; this host's on SQLite. One record, one clock.
func (c *Core) lockWriter(ctx context.Context) *locks.Writer {
	return &locks.Writer{Step: func(s string) { c.doStep("lock-" + s) }, Now: func() time.Time { return c.leaseNow(ctx) }}
}

// branchesRoot is the directory every worktree must be inside.
func (c *Core) branchesRoot() string {
	root, err := filepath.Abs(c.ws.RepoRoot)
	if err != nil {
		return ""
	}
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	return filepath.Join(root, "branches")
}

// worktreeState says whether a worktree exists by the rule the live model uses
// (leases.WorktreeRoots.Probe): only a path on this host strictly inside
// <repo-root>/branches is looked at, with lstat, and a link that leaves the repository
// root is never followed; anything it cannot tell reads unknown, with the reason.
// A DB row that records no host is judged on the DB's host (rowHost).
func (c *Core) worktreeState(path, host string) (leaserec.WorktreeState, string) {
	h, why := c.rowHost(host)
	w := leases.ResolveWorktreeRoots(c.ws.RepoRoot).Probe(path, h)
	if why != "" {
		w.Why += " (" + why + ")"
	}
	return w.State, w.Why
}

// liveness is kill(pid, 0) evidence, only for processes recorded on this host. A DB row
// that records no host is judged on the DB's host (rowHost).
func (c *Core) liveness(pid int64, host string) leaserec.ProcessState {
	h, _ := c.rowHost(host)
	if h != c.ws.host() {
		return leaserec.ProcessUnknown
	}
	return leases.Liveness(int(pid), h)
}

// rowHost is the host a DB row's pid and worktree belong to (leases.RowHost): the one it
// records, else the DB's (Workspace.DBHost, else this one).
func (c *Core) rowHost(recorded string) (string, string) {
	return leases.RowHost(recorded, c.ws.DBHost, c.ws.host())
}

func lockActor(a Actor) lockrec.Actor {
	return lockrec.Actor{Login: a.GiteaLogin, OSUser: a.OSUser, Host: a.Host}
}

func itemOf(w leaserec.WorkRef) *Item {
	return &Item{Remote: w.Remote, Org: w.Org, Repo: w.Repo, Kind: string(w.Kind), Number: w.Number}
}

func workRef(it Item) leaserec.WorkRef {
	k := leaserec.KindIssue
	if it.Kind == "pr" {
		k = leaserec.KindPR
	}
	return leaserec.WorkRef{Remote: it.Remote, Org: it.Org, Repo: it.Repo, Kind: k, Number: it.Number}
}

func lockKey(w leaserec.WorkRef) lockrec.Key {
	return lockrec.Key{Remote: w.Remote, Org: w.Org, Repo: w.Repo, Issue: w.Number}
}

// fromLeases turns a transition's refusal into the core's refusal, code unchanged.
func fromLeases(o leases.Outcome) *Refusal {
	if o.OK() {
		return nil
	}
	return refuse(string(o.Code), o.Message)
}

func verdict(v leases.Verdict) *Refusal {
	if v.OK {
		return nil
	}
	return refuse(string(v.Code), v.Message)
}
