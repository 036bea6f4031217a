package live

import (
	"context"
	"strings"
	"time"

	"steward/leases"
	"steward/leases/leaserec"
	"steward/locks"
	"steward/locks/lockrec"
	"steward/model"
)

// Workspace names the sources a snapshot reads.
type Workspace struct {
	LocksDir string
	// DBPath is the control-plane DB: a SQLite file or a postgres:// URL (no password).
	DBPath string
	// DBPasswordFile holds a PostgreSQL DBPath's password (else PGPASSWORD / PGPASSFILE).
	DBPasswordFile string
	// RepoRoot is the canonical repository root; only worktrees under
	// RepoRoot/branches are ever stat'ed.
	RepoRoot string
	// DBHost is the host the control-plane DB was written on when that is another one
	// (config db_host): DB rows that record no host are then unknown, never dead.
	DBHost string
	// LegacyLock is the supervised system's legacy single-slot lock file
	// (GITEA_ISSUE_LOCK_FILE, else /tmp/gitea_issue_lock.json): read with the directory
	// when it exists, named by its path ("" reads none).
	LegacyLock string
	// Host is the host the lock directory lives on ("" = this one; config host). On
	// another host the lock files are not read: the lock source reads not observed
	// (model.LocksHere) and the DB alone is judged.
	Host string
}

// readLegacy reads the legacy single-slot lock at path: nil when there is none. Its entry
// is named by its path, which no file of the directory can be.
func readLegacy(path string) *lockrec.Entry {
	if path == "" {
		return nil
	}
	e := locks.ReadLegacy(path)
	if e != nil {
		e.Name = path
	}
	return e
}

// DBTarget is the control-plane DB the workspace names, for leases.OpenReader.
func (w Workspace) DBTarget() leases.Target {
	return leases.Target{Loc: w.DBPath, PasswordFile: w.DBPasswordFile}
}

// loadLocks reads the locks directory once, with the legacy single-slot lock at legacy ("" for
// none).
func loadLocks(dir, legacy string, p Probe, now time.Time) ([]model.LockObs, model.SourceHealth, []string) {
	t0 := time.Now()
	snap, err := locks.LoadDir(dir, locks.LoadOptions{})
	if err != nil {
		return nil, model.SourceHealth{
			Status:       model.StatusUnavailable,
			Reason:       err.Error(),
			ScannedAt:    now,
			ScanDuration: time.Since(t0),
		}, nil
	}
	out := make([]model.LockObs, 0, len(snap.Live))
	var findings []string
	var spell spellingFindings
	for _, e := range snap.Live {
		e.Record.Detach() // the snapshot keeps what was decoded, not the files' bytes
		spell.add(lockSpelling(e))
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
	if e := readLegacy(legacy); e != nil {
		out = append(out, p.ObserveLock(*e, now))
	}
	findings = append(findings, spell.list("lock")...)
	h := model.SourceHealth{Status: model.StatusOK, ScannedAt: now, ScanDuration: time.Since(t0)}
	if snap.RetiredUnavailable != nil {
		findings = append(findings, "retired/ unreadable: "+snap.RetiredUnavailable.Detail)
	}
	return out, h, findings
}

// LoadDB reads the control-plane DB once through r (leases, sessions, work
// items, and events past cursor). It returns the new event cursor.
func LoadDB(ctx context.Context, r leases.Reader, p Probe, cursor int64, now time.Time) (*model.Input, int64, error) {
	return loadDB(ctx, r, p, cursor, now, leases.ReadOptions{})
}

// loadDB is LoadDB with the read's options (a stream's lease rows: opt.Leases).
func loadDB(ctx context.Context, r leases.Reader, p Probe, cursor int64, now time.Time, opt leases.ReadOptions) (
	*model.Input, int64, error) {
	t0 := time.Now()
	in := &model.Input{}
	s, err := r.Snapshot(ctx, opt)
	if err != nil {
		in.DBHealth = model.HealthOf(leases.HealthFromError(err), now, time.Since(t0))
		return in, cursor, err
	}
	fillDB(in, s, p)
	in.Findings = append(in.Findings, workItemSpellings(s.WorkItems)...)
	evs, eh, cursor, err := readEvents(ctx, r, cursor)
	if err != nil {
		eh = leases.HealthFromError(err)
	}
	in.Events = evs
	in.DB.Events = eh.Status == leaserec.HealthOK
	in.DBHealth = model.DBHealth(
		s.SessionsHealth,
		s.LeasesHealth,
		s.WorkItemsHealth,
		eh,
		s.MetaHealth,
		now,
		time.Since(t0),
	)
	return in, cursor, nil
}

func fillDB(in *model.Input, s *leases.Snapshot, p Probe) {
	in.DB = model.DBSections{
		Sessions:  s.SessionsHealth.Status == leaserec.HealthOK,
		Leases:    s.LeasesHealth.Status == leaserec.HealthOK,
		WorkItems: s.WorkItemsHealth.Status == leaserec.HealthOK,
	}
	in.WorkItems = s.WorkItems
	in.SessionsOmitted = s.SessionsOmitted
	in.Sessions = make([]model.SessionObs, 0, len(s.Sessions))
	for _, x := range s.Sessions {
		in.Sessions = append(in.Sessions, p.ObserveSession(x))
	}
	in.Leases = make([]model.LeaseObs, 0, len(s.Leases))
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
func readEvents(ctx context.Context, r leases.Reader, cursor int64) ([]leaserec.Event, leaserec.Health, int64, error) {
	return r.EventsBacklog(ctx, cursor, backlogEvents)
}

// Load reads every local source of ws once (no Gitea) and returns the Input
// for Build. A missing or unreadable DB is an unavailable source, never an
// empty one.
func Load(ctx context.Context, ws Workspace, p Probe, now time.Time) *model.Input {
	r, err := leases.OpenReader(ws.DBTarget())
	return load(ctx, ws, p, now, r, err)
}

// LoadClocked is Load at the clock every verdict is judged at: the control-plane DB's on
// PostgreSQL (read once, the offset from host's clock measured around the query; its
// instant is the read's now), else host's. It returns the input, with its Clock, and that
// instant (model.Build's now).
func LoadClocked(ctx context.Context, ws Workspace, p Probe, host func() time.Time) (*model.Input, time.Time) {
	r, err := leases.OpenReader(ws.DBTarget())
	now, clk := host(), model.Clock{Source: model.ClockHost}
	if ck, ok := r.(leases.Clock); ok && err == nil {
		t0 := host()
		if db, cerr := ck.Clock(ctx); cerr == nil {
			mid := t0.Add(host().Sub(t0) / 2)
			now, clk = db, model.Clock{Source: model.ClockDB, Offset: db.Sub(mid.Round(0)), ReadAt: mid.Round(0)}
		}
	}
	in := load(ctx, ws, p, now, r, err)
	in.Clock = clk
	return in, now
}

// load is Load on the reader r (or the error that opening it gave).
func load(ctx context.Context, ws Workspace, p Probe, now time.Time, r leases.Reader, err error) *model.Input {
	if p.DBHost == "" {
		p.DBHost = ws.DBHost
	}
	var lo []model.LockObs
	var findings []string
	lh, observe := model.LocksHere(ws.Host, p.Host, now)
	if observe {
		lo, lh, findings = loadLocks(ws.LocksDir, ws.LegacyLock, p, now)
	}
	in := &model.Input{}
	if err != nil {
		in.DBHealth = model.HealthOf(leases.HealthFromError(err), now, 0)
	} else {
		defer r.Close()
		in, _, _ = LoadDB(ctx, r, p, 0, now)
		in.RefLeases = lookupRefs(ctx, r, p, lo, in.Leases)
	}
	in.Locks, in.LocksHealth = lo, lh
	in.Findings = append(in.Findings, findings...)
	in.GiteaHealth = NoGitea(model.SourceHealth{}, now)
	return in
}

// NoGitea is the Gitea source's health with no Gitea to read: h stamped at now, or not
// configured when h is zero.
func NoGitea(h model.SourceHealth, now time.Time) model.SourceHealth {
	if h.Status == "" {
		h = model.SourceHealth{Status: model.StatusNotConfigured, Reason: "no Gitea configured"}
	}
	h.ScannedAt = now
	return h
}

// lookupRefs reads, by id, leases that locks name and the snapshot does not hold.
func lookupRefs(
	ctx context.Context,
	r leases.Reader,
	p Probe,
	ls []model.LockObs,
	have []model.LeaseObs,
) map[string]*model.LeaseObs {
	known := make(map[string]bool, len(have))
	for _, l := range have {
		known[l.Lease.LeaseID] = true
	}
	ptrs := make([]*model.LockObs, len(ls))
	for i := range ls {
		ptrs[i] = &ls[i]
	}
	return lookupRefsOf(ctx, r, p, ptrs, func(id string) bool { return known[id] })
}
