package live

import (
	"encoding/json"
	"fmt"
	"time"

	"steward/leases"
	"steward/leases/leaserec"
	"steward/locks/lockrec"
	"steward/model"
)

// Probe makes the observations that need IO: process liveness (kill(pid, 0),
// through leases.Liveness, on this host only) and worktree presence (through
// leases.WorktreeRoots.Probe: only under <repo-root>/branches on this host, with lstat,
// never through a link that leaves the repository root — the rule the governed core uses).
type Probe struct {
	// Host is this node's name (leases.HostName: $STEWARD_HOSTNAME, else the OS's).
	Host string
	// DBHost is the host the DB was written on ("" = this one): a DB row that records no
	// host is judged on it (leases.RowHost, the seed's single-host rule).
	DBHost string
	// Roots are where worktrees are looked for; the zero value looks at nothing.
	Roots leases.WorktreeRoots
	// Liveness reports a process's state; leases.Liveness when nil. Liveness and Worktree
	// are called from several goroutines at once (a read of many records probes them on
	// every core): they must be safe for concurrent use.
	Liveness func(pid int, host string) leaserec.ProcessState
	// Worktree reports a worktree's state; Roots.Probe when nil.
	Worktree func(path, host string) leases.WorktreeReport
}

// NewProbe returns the probe for a workspace on this host.
func NewProbe(repoRoot string) Probe {
	p := Probe{Roots: leases.ResolveWorktreeRoots(repoRoot)}
	p.Host, _ = leases.HostName()
	return p
}

// other reports whether host is another node than this one: nothing of its process table
// or file system is observed from here.
func (p Probe) other(host string) bool { return host != "" && host != p.Host }

func (p Probe) owner(pid int64, host string) (model.Liveness, string) {
	switch {
	case pid <= 0:
		return model.LivenessUnknown, "no pid recorded"
	case host != "" && host != p.Host:
		return model.LivenessUnknown, shared("recorded on host " + host + ", not this one: liveness is not evidence here")
	}
	f := p.Liveness
	if f == nil {
		f = leases.Liveness
	}
	st := f(int(pid), host)
	return model.Liveness(st), "kill(" + fmt.Sprint(pid) + ", 0) on this host"
}

func (p Probe) worktree(path, host string) leases.WorktreeReport {
	f := p.Worktree
	if f == nil {
		f = p.Roots.Probe
	}
	return f(path, host)
}

// memo returns p with its liveness and worktree probes remembered for the life of the
// returned value: one pass of the re-probe asks each (pid, host) and (path, host) once.
func (p Probe) memo() Probe {
	live, tree := p.Liveness, p.Worktree
	if live == nil {
		live = leases.Liveness
	}
	if tree == nil {
		tree = p.Roots.Probe
	}
	p.Liveness = remember(live)
	p.Worktree = remember(tree)
	return p
}

// remember wraps a probe of (a, host) so that each pair is asked once.
func remember[A comparable, R any](f func(A, string) R) func(A, string) R {
	type key struct {
		a    A
		host string
	}
	seen := map[key]R{}
	return func(a A, host string) R {
		k := key{a, host}
		r, ok := seen[k]
		if !ok {
			r = f(a, host)
			seen[k] = r
		}
		return r
	}
}

// lockHost is the lock's "host" field; a lock without one is taken to be this
// host's (the lock directory is per-user and local), as the governed core does.
func lockHost(rec *lockrec.Record, self string) string {
	for _, f := range rec.Extra {
		if f.Key == "host" {
			var h string
			if json.Unmarshal(f.Value, &h) == nil && h != "" {
				return h
			}
		}
	}
	return self
}

// ownerMoved reports whether the owner (pid, host) would be judged otherwise than was:
// only a pid on this host is probed (p.owner), so only it can move.
func (p Probe) ownerMoved(pid int64, host string, was model.Liveness) bool {
	if pid <= 0 || host != "" && host != p.Host {
		return false
	}
	f := p.Liveness
	if f == nil {
		f = leases.Liveness
	}
	return model.Liveness(f(int(pid), host)) != was
}

// worktreeMoved reports whether the worktree at path would be judged otherwise than was.
func (p Probe) worktreeMoved(path, host string, was model.Worktree) bool {
	return model.Worktree(p.worktree(path, host).State) != was
}

// lockWorktree is the worktree a lock names: its worktree_path, else its work lease's.
func lockWorktree(rec *lockrec.Record) string {
	if rec.WorktreePath == "" && rec.WorkLease != nil {
		return rec.WorkLease.WorktreePath
	}
	return rec.WorktreePath
}

// ObserveLock attaches owner liveness and worktree presence to a lock entry.
func (p Probe) ObserveLock(e lockrec.Entry, now time.Time) model.LockObs {
	lo := model.LockObs{Entry: e, ReadAt: now, Owner: model.LivenessUnknown, Worktree: model.WorktreeUnknown}
	if e.Unreadable != nil {
		return lo
	}
	rec := &e.Record
	switch {
	case rec.SessionPID != nil:
		lo.PID = *rec.SessionPID
	case rec.PID != nil:
		lo.PID = *rec.PID
	}
	lo.Host = shared(lockHost(rec, p.Host))
	lo.OtherHost = p.other(lo.Host)
	lo.Owner, lo.OwnerWhy = p.owner(lo.PID, lo.Host)
	w := p.worktree(lockWorktree(rec), lo.Host)
	lo.Worktree, lo.WorkWhy, lo.WorkEscapes, lo.WorkStatic = model.Worktree(w.State), w.Why, w.Escapes, !w.Looked
	return lo
}

// ObserveLease attaches owner liveness and worktree presence to a lease.
func (p Probe) ObserveLease(l leaserec.Lease) model.LeaseObs {
	lo := model.LeaseObs{
		Lease:    sharedLease(l),
		Owner:    model.LivenessUnknown,
		Worktree: model.WorktreeUnknown,
		OwnerWhy: "lease ended",
		WorkWhy:  "lease ended",
	}
	if l.Status.Terminal() {
		return lo
	}
	host, why := leases.RowHost(l.OwnerHost, p.DBHost, p.Host)
	lo.Host = shared(host)
	lo.OtherHost = p.other(host)
	lo.Owner, lo.OwnerWhy = p.owner(l.OwnerPID, host)
	w := p.worktree(l.WorktreePath, host)
	lo.Worktree, lo.WorkWhy = model.Worktree(w.State), w.Why
	if why != "" {
		lo.OwnerWhy += "; " + why
		lo.WorkWhy += "; " + why
	}
	return lo
}

// ObserveSession attaches process liveness to a session row (a row without a host is
// judged on the DB's host, as a lease is).
func (p Probe) ObserveSession(s leaserec.Session) model.SessionObs {
	host, _ := leases.RowHost(s.Host, p.DBHost, p.Host)
	so := model.SessionObs{Session: sharedSession(s), Owner: model.LivenessUnknown}
	so.Owner, _ = p.owner(s.PID, host)
	return so
}

// rowHost is the host a DB row's pid and worktree belong to (leases.RowHost).
func (p Probe) rowHost(recorded string) string {
	h, _ := leases.RowHost(recorded, p.DBHost, p.Host)
	return h
}
