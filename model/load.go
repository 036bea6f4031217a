package model

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"steward/leases"
	"steward/locks"
)

// Workspace names the sources a snapshot reads.
type Workspace struct {
	LocksDir string
	DBPath   string
	// RepoRoot is the canonical repository root; only worktrees under
	// RepoRoot/branches are ever stat'ed.
	RepoRoot string
	// DBHost is the host the control-plane DB was written on when that is another one
	// (config db_host): DB rows that record no host are then unknown, never dead.
	DBHost string
}

// Probe makes the observations that need IO: process liveness (kill(pid, 0),
// through leases.Liveness, on this host only) and worktree presence (through
// leases.WorktreeRoots.Probe: only under <repo-root>/branches on this host, with lstat,
// never through a link that leaves the repository root — the rule the governed core uses).
type Probe struct {
	// Host is this machine's name (os.Hostname when empty).
	Host string
	// DBHost is the host the DB was written on ("" = this one): a DB row that records no
	// host is judged on it (leases.RowHost, the seed's single-host rule).
	DBHost string
	// Roots are where worktrees are looked for; the zero value looks at nothing.
	Roots leases.WorktreeRoots
	// Liveness reports a process's state; leases.Liveness when nil.
	Liveness func(pid int, host string) leases.ProcessState
	// Worktree reports a worktree's state; Roots.Probe when nil.
	Worktree func(path, host string) leases.WorktreeReport
}

// NewProbe returns the probe for a workspace on this host.
func NewProbe(repoRoot string) Probe {
	p := Probe{Roots: leases.ResolveWorktreeRoots(repoRoot)}
	p.Host, _ = os.Hostname()
	return p
}

func (p Probe) owner(pid int64, host string) (Liveness, string) {
	switch {
	case pid <= 0:
		return LivenessUnknown, "no pid recorded"
	case host != "" && host != p.Host:
		return LivenessUnknown, "recorded on host " + host + ", not this one: liveness is not evidence here"
	}
	f := p.Liveness
	if f == nil {
		f = leases.Liveness
	}
	st := f(int(pid), host)
	return Liveness(st), "kill(" + fmt.Sprint(pid) + ", 0) on this host"
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
func lockHost(rec *locks.Record, self string) string {
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

// ObserveLock attaches owner liveness and worktree presence to a lock entry.
func (p Probe) ObserveLock(e locks.Entry, now time.Time) LockObs {
	lo := LockObs{Entry: e, ReadAt: now, Owner: LivenessUnknown, Worktree: WorktreeUnknown}
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
	lo.Host = lockHost(rec, p.Host)
	lo.Owner, lo.OwnerWhy = p.owner(lo.PID, lo.Host)
	wt := rec.WorktreePath
	if wt == "" && rec.WorkLease != nil {
		wt = rec.WorkLease.WorktreePath
	}
	w := p.worktree(wt, lo.Host)
	lo.Worktree, lo.WorkWhy, lo.WorkEscapes, lo.WorkStatic = Worktree(w.State), w.Why, w.Escapes, !w.Looked
	return lo
}

// ObserveLease attaches owner liveness and worktree presence to a lease.
func (p Probe) ObserveLease(l leases.Lease) LeaseObs {
	lo := LeaseObs{Lease: l, Owner: LivenessUnknown, Worktree: WorktreeUnknown, OwnerWhy: "lease ended", WorkWhy: "lease ended"}
	if l.Status.Terminal() {
		return lo
	}
	host, why := leases.RowHost(l.OwnerHost, p.DBHost, p.Host)
	lo.Host = host
	lo.Owner, lo.OwnerWhy = p.owner(l.OwnerPID, host)
	w := p.worktree(l.WorktreePath, host)
	lo.Worktree, lo.WorkWhy = Worktree(w.State), w.Why
	if why != "" {
		lo.OwnerWhy += "; " + why
		lo.WorkWhy += "; " + why
	}
	return lo
}

// ObserveSession attaches process liveness to a session row (a row without a host is
// judged on the DB's host, as a lease is).
func (p Probe) ObserveSession(s leases.Session) SessionObs {
	host, _ := leases.RowHost(s.Host, p.DBHost, p.Host)
	so := SessionObs{Session: s, Owner: LivenessUnknown}
	so.Owner, _ = p.owner(s.PID, host)
	return so
}

// rowHost is the host a DB row's pid and worktree belong to (leases.RowHost).
func (p Probe) rowHost(recorded string) string {
	h, _ := leases.RowHost(recorded, p.DBHost, p.Host)
	return h
}

func health(h leases.Health, at time.Time, d time.Duration) SourceHealth {
	st := SourceHealth{Status: Status(h.Status), Reason: strings.Join(h.Reasons, "; "), ScannedAt: at, ScanDuration: d, Notes: h.Notes}
	if st.Status == "" {
		st.Status = StatusOK
	}
	st.Partial = st.Status == StatusDegraded
	return st
}

// LoadLocks reads the locks directory once.
func LoadLocks(dir string, p Probe, now time.Time) ([]LockObs, SourceHealth, []string) {
	t0 := time.Now()
	snap, err := locks.LoadDir(dir, locks.LoadOptions{})
	if err != nil {
		return nil, SourceHealth{Status: StatusUnavailable, Reason: err.Error(), ScannedAt: now, ScanDuration: time.Since(t0)}, nil
	}
	out := make([]LockObs, 0, len(snap.Live))
	var findings []string
	for _, e := range snap.Live {
		lo := p.ObserveLock(e, now)
		if lo.WorkEscapes {
			sep := ": "
			if strings.HasPrefix(lo.WorkWhy, "outside ") {
				sep = " is "
			}
			findings = append(findings, "lock "+e.Name+": worktree "+e.Record.WorktreePath+sep+lo.WorkWhy)
		}
		out = append(out, lo)
	}
	h := SourceHealth{Status: StatusOK, ScannedAt: now, ScanDuration: time.Since(t0)}
	if snap.RetiredUnavailable != nil {
		findings = append(findings, "retired/ unreadable: "+snap.RetiredUnavailable.Detail)
	}
	return out, h, findings
}

// LoadDB reads the control-plane DB once through r (leases, sessions, work
// items, and events past cursor). It returns the new event cursor.
func LoadDB(ctx context.Context, r leases.Reader, p Probe, cursor int64, now time.Time) (*Input, int64, error) {
	t0 := time.Now()
	in := &Input{}
	s, err := r.Snapshot(ctx, leases.ReadOptions{})
	if err != nil {
		in.DBHealth = health(leases.HealthFromError(err), now, time.Since(t0))
		return in, cursor, err
	}
	fillDB(in, s, p)
	evs, eh, cursor, err := readEvents(ctx, r, cursor)
	if err != nil {
		eh = leases.HealthFromError(err)
	}
	in.Events = evs
	in.DB.Events = eh.Status == leases.HealthOK
	in.DBHealth = dbHealth(s.SessionsHealth, s.LeasesHealth, s.WorkItemsHealth, eh, s.MetaHealth, now, time.Since(t0))
	return in, cursor, nil
}

// dbHealth is the DB source's health from its sections: the worst status, with every
// reason and note. It is partial only when a section the whole-DB verdicts rest on —
// sessions, leases, work items — was not read completely: then the set of rows itself may
// be incomplete, and orphan-lease, lock-lease-mismatch and "free" are withheld. An events
// table or schema_meta that cannot be read degrades the DB without making it partial (no
// verdict rests on an absent event); an absent enrichment column, or a row with
// undecodable values, is only a note (that row's own item says it is unproven).
func dbHealth(sessions, ls, items, events, meta leases.Health, now time.Time, d time.Duration) SourceHealth {
	h := health(worstOf(sessions, ls, items, events, meta), now, d)
	if h.Status == StatusUnavailable && ls.Status != leases.HealthUnavailable {
		h.Status = StatusDegraded
	}
	ok := func(x leases.Health) bool { return x.Status == leases.HealthOK || x.Status == "" }
	h.Partial = h.Status != StatusUnavailable && !(ok(sessions) && ok(ls) && ok(items))
	return h
}

func fillDB(in *Input, s *leases.Snapshot, p Probe) {
	in.DB = DBSections{Sessions: s.SessionsHealth.Status == leases.HealthOK, Leases: s.LeasesHealth.Status == leases.HealthOK,
		WorkItems: s.WorkItemsHealth.Status == leases.HealthOK}
	in.WorkItems = s.WorkItems
	in.SessionsOmitted = s.SessionsOmitted
	in.Sessions = make([]SessionObs, 0, len(s.Sessions))
	for _, x := range s.Sessions {
		in.Sessions = append(in.Sessions, p.ObserveSession(x))
	}
	in.Leases = make([]LeaseObs, 0, len(s.Leases))
	for _, l := range s.Leases {
		in.Leases = append(in.Leases, p.ObserveLease(l))
	}
}

// backlogEvents is how many of the most recent events a catch-up read keeps besides every
// claim refusal: the activity the model shows (Config.ActivityLimit, 200 by default) is
// drawn from them.
const backlogEvents = 1000

// readEvents catches up with the events past cursor: what the model derives from them
// (recent activity, claim refusals), not every event the DB ever recorded.
func readEvents(ctx context.Context, r leases.Reader, cursor int64) ([]leases.Event, leases.Health, int64, error) {
	return r.EventsBacklog(ctx, cursor, backlogEvents)
}

func worstOf(hs ...leases.Health) leases.Health {
	out := leases.Health{Status: leases.HealthOK}
	rank := map[leases.HealthStatus]int{leases.HealthOK: 0, "": 0, leases.HealthDegraded: 1, leases.HealthUnavailable: 2}
	for _, h := range hs {
		if rank[h.Status] > rank[out.Status] {
			out.Status = h.Status
		}
		out.Reasons = append(out.Reasons, h.Reasons...)
		out.Notes = append(out.Notes, h.Notes...)
	}
	return out
}

// Load reads every local source of ws once (no Gitea) and returns the Input
// for Build. A missing or unreadable DB is an unavailable source, never an
// empty one.
func Load(ctx context.Context, ws Workspace, p Probe, now time.Time) *Input {
	if p.DBHost == "" {
		p.DBHost = ws.DBHost
	}
	lo, lh, findings := LoadLocks(ws.LocksDir, p, now)
	in := &Input{}
	r, err := leases.OpenReader(leases.Target{Loc: ws.DBPath})
	if err != nil {
		in.DBHealth = health(leases.HealthFromError(err), now, 0)
	} else {
		defer r.Close()
		in, _, _ = LoadDB(ctx, r, p, 0, now)
		in.RefLeases = lookupRefs(ctx, r, p, lo, in.Leases)
	}
	in.Locks, in.LocksHealth = lo, lh
	in.Findings = append(in.Findings, findings...)
	in.GiteaHealth = SourceHealth{Status: StatusNotConfigured, Reason: "no Gitea configured", ScannedAt: now}
	return in
}

// lookupRefs reads, by id, leases that locks name and the snapshot does not hold.
func lookupRefs(ctx context.Context, r leases.Reader, p Probe, ls []LockObs, have []LeaseObs) map[string]*LeaseObs {
	known := make(map[string]bool, len(have))
	for _, l := range have {
		known[l.Lease.LeaseID] = true
	}
	out := map[string]*LeaseObs{}
	for _, lo := range ls {
		id := lo.Entry.Record.LeaseID
		if id == "" || known[id] || lo.Entry.Unreadable != nil {
			continue
		}
		if _, done := out[id]; done {
			continue
		}
		l, found, err := r.LeaseByID(ctx, id)
		switch {
		case err != nil:
			continue // unknown: no conclusion
		case !found:
			out[id] = nil
		default:
			o := p.ObserveLease(l)
			out[id] = &o
		}
	}
	return out
}
