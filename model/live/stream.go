package live

import (
	"context"
	"runtime"
	"slices"
	"strings"
	"time"

	"steward/leases"
	"steward/leases/leaserec"
	"steward/locks"
	"steward/model"
)

// Streamed is a one-shot read of a workspace derived a page of items at a time
// (model.Stream): what `steward status --json` writes, without ever holding the whole
// fleet's lock files, derivation and snapshot at once.
type Streamed struct {
	// Summary is the snapshot without claims, sessions and items, with the orphans and
	// contention of every page (not yet previewed).
	Summary *model.Snapshot
	// JSON holds the pages' claims and items, encoded; Sessions yields the sessions.
	JSON     *model.StreamJSON
	Sessions func(yield func(*model.Session) bool)
	// View is the lock directory as read (nil when it was not): the previews of the
	// orphans look items up in it (locks.ViewOf).
	View *locks.IndexView
	// Now is the instant every verdict was judged at.
	Now time.Time
}

// StreamPage is the most lock files, and the most groups, a page reads and derives
// (a group larger than that is one page). A variable for the tests that compare pages of
// one item with the whole.
var StreamPage = 512

// StreamClocked is LoadClocked read for a streamed derivation (see Stream).
func StreamClocked(ctx context.Context, ws Workspace, p Probe, host func() time.Time, cfg model.Config,
	gitea model.SourceHealth) (*Streamed, error) {
	r, err := leases.OpenReader(ws.DBTarget())
	now, clk := host(), model.Clock{Source: model.ClockHost}
	if ck, ok := r.(leases.Clock); ok && err == nil {
		t0 := host()
		if db, cerr := ck.Clock(ctx); cerr == nil {
			mid := t0.Add(host().Sub(t0) / 2)
			now, clk = db, model.Clock{Source: model.ClockDB, Offset: db.Sub(mid.Round(0)), ReadAt: mid.Round(0)}
		}
	}
	return stream(ctx, ws, p, now, clk, r, err, cfg, gitea)
}

// StreamAt is Load read for a streamed derivation (see Stream).
func StreamAt(ctx context.Context, ws Workspace, p Probe, now time.Time, cfg model.Config,
	gitea model.SourceHealth) (*Streamed, error) {
	r, err := leases.OpenReader(ws.DBTarget())
	return stream(ctx, ws, p, now, model.Clock{}, r, err, cfg, gitea)
}

// stream reads the DB whole, then the lock files a page of groups at a time, deriving and
// encoding each page (model.Stream, model.StreamJSON). The bytes the result writes are
// those of load's input built (model.Build) and encoded, the lock source's scan duration
// aside (the reads only, summed over the pages). *model.ErrReplan when a lock file's
// record names an item already derived: the caller reads and builds whole.
func stream(ctx context.Context, ws Workspace, p Probe, now time.Time, clk model.Clock, r leases.Reader, rerr error,
	cfg model.Config, gitea model.SourceHealth) (*Streamed, error) {
	if p.DBHost == "" {
		p.DBHost = ws.DBHost
	}
	in := &model.Input{}
	rows := model.NewLeaseStore()
	if rerr != nil {
		in.DBHealth = model.HealthOf(leases.HealthFromError(rerr), now, 0)
	} else {
		defer r.Close()
		in, _, _ = loadDB(ctx, r, p, 0, now, leases.ReadOptions{Leases: leaseSink{rows, p}})
	}
	in.Clock = clk
	in.GiteaHealth = NoGitea(gitea, now)
	lh, observe := model.LocksHere(ws.Host, p.Host, now)
	var ls *locks.Listing
	t0 := time.Now()
	var took time.Duration
	if observe {
		var err error
		if ls, err = locks.LoadListing(ws.LocksDir); err != nil {
			lh = model.SourceHealth{Status: model.StatusUnavailable, Reason: err.Error(), ScannedAt: now,
				ScanDuration: time.Since(t0)}
			ls = nil
		} else {
			lh = model.SourceHealth{Status: model.StatusOK, ScannedAt: now}
		}
	}
	took += time.Since(t0)
	in.LocksHealth = lh
	st := model.NewStream(in, rows, cfg, now)
	// The stream holds the work items as items; the rows as read, the SQLite driver's and
	// the scan's garbage go now, so that the pages start from the heap the stream needs.
	in.WorkItems = nil
	runtime.GC()
	enc := model.NewStreamJSON(&model.Snapshot{GeneratedAt: now})
	out := &Streamed{JSON: enc, Sessions: st.Sessions, Now: now}
	// With no lock file read (a directory that cannot be listed, or not observed from this
	// host), the DB's items are derived all the same, in pages.
	var view *locks.IndexView
	if ls != nil {
		out.View = locks.NewView(ws.LocksDir)
		view = out.View
	}
	findings, d, err := streamLocks(ctx, ws, p, now, st, enc, ls, view, r, rerr == nil, observe)
	if err != nil {
		return nil, err
	}
	if ls != nil {
		lh.ScanDuration = took + d
	}
	s := st.Summary(lh, findings)
	s.Orphans, s.Contention = enc.Orphans(), enc.Contention()
	out.Summary = s
	return out, nil
}

// leaseSink holds each lease row read, observed, in a store.
type leaseSink struct {
	st *model.LeaseStore
	p  Probe
}

func (s leaseSink) Lease(l leaserec.Lease) { o := s.p.ObserveLease(l); s.st.Add(&o) }
func (s leaseSink) Restart()               { s.st.Restart() }

// indexedFinding is a finding at its lock file's place in the listing.
type indexedFinding struct {
	at int
	s  string
}

// streamLocks reads the listing's files a page of groups at a time, derives each page and
// adds it to enc. It returns the lock files' findings, as loadLocks orders them, and the
// time spent reading.
func streamLocks(ctx context.Context, ws Workspace, p Probe, now time.Time, st *model.Stream, enc *model.StreamJSON,
	ls *locks.Listing, view *locks.IndexView, r leases.Reader, dbOpen, observe bool) ([]string, time.Duration, error) {
	var took time.Duration
	listed := ls != nil
	if !listed {
		ls = &locks.Listing{}
	}
	// Plan every file into the group its name gives; the files whose name gives none are
	// read first, and filed by their record.
	byGroup := map[string][]int{}
	var unnamed []int
	for i, n := range ls.Names {
		k, ok := ls.NameKey(i)
		if g := st.PlanLockName(n, k, ok); g != "" {
			byGroup[g] = append(byGroup[g], i)
		} else {
			unnamed = append(unnamed, i)
		}
	}
	var escapes, spells []indexedFinding
	carry := map[string][]*model.LockObs{} // group → files read whose record names it
	late := []string{}                     // groups no plan names, in the order met
	inPage := map[string]bool{}
	read := func(ix []int) []*model.LockObs {
		t := time.Now()
		es := ls.Read(ix)
		out := make([]*model.LockObs, 0, len(es))
		for i := range es {
			e := &es[i]
			if e.Missing {
				continue
			}
			e.Record.Detach()
			if f := lockSpelling(*e); f != "" {
				spells = append(spells, indexedFinding{ix[i], f})
			}
			lo := p.ObserveLock(*e, now)
			if lo.WorkEscapes {
				sep := ": "
				if strings.HasPrefix(lo.WorkWhy, "outside ") {
					sep = " is "
				}
				escapes = append(escapes, indexedFinding{ix[i], "lock " + e.Name + ": worktree " + e.Record.WorktreePath + sep +
					lo.WorkWhy})
			}
			if view != nil {
				view.Add(&lo.Entry)
			}
			out = append(out, &lo)
		}
		took += time.Since(t)
		return out
	}
	// file routes a file read to its page, a later one, or the last; ErrReplan when its
	// group was derived already.
	var page []*model.LockObs
	file := func(lo *model.LockObs) error {
		g := model.LockGroup(lo)
		planned, done := st.Planned(g)
		switch {
		case inPage[g]:
			page = append(page, lo)
		case done:
			return &model.ErrReplan{File: lo.Entry.Name, Group: g}
		case planned:
			carry[g] = append(carry[g], lo)
		default:
			if _, ok := carry[g]; !ok {
				late = append(late, g)
			}
			carry[g] = append(carry[g], lo)
		}
		return nil
	}
	for _, lo := range read(unnamed) {
		if err := file(lo); err != nil {
			return nil, took, err
		}
	}
	if listed && observe {
		if e := readLegacy(ws.LegacyLock); e != nil {
			lo := p.ObserveLock(*e, now)
			if err := file(&lo); err != nil {
				return nil, took, err
			}
		}
	}
	derive := func(gs []string) error {
		for _, g := range gs {
			page = append(page, carry[g]...)
			delete(carry, g)
		}
		var refs map[string]*model.LeaseObs
		if dbOpen {
			refs = lookupRefsOf(ctx, r, p, page, st.HasLease)
		}
		err := enc.Add(st.Derive(gs, page, refs))
		clear(inPage)
		page = page[:0]
		return err
	}
	groups := st.Groups()
	if err := st.Pack(groups); err != nil {
		return nil, took, err
	}
	for len(groups) > 0 {
		var gs []string
		var ix []int
		for len(groups) > 0 && (len(gs) == 0 || len(gs) < StreamPage && len(ix)+len(byGroup[groups[0]]) <= StreamPage) {
			g := groups[0]
			groups = groups[1:]
			gs, ix = append(gs, g), append(ix, byGroup[g]...)
			inPage[g] = true
			delete(byGroup, g)
		}
		slices.Sort(ix)
		for _, lo := range read(ix) {
			if err := file(lo); err != nil {
				return nil, took, err
			}
		}
		if err := derive(gs); err != nil {
			return nil, took, err
		}
	}
	if len(late) > 0 {
		for _, g := range late {
			inPage[g] = true
		}
		if err := derive(late); err != nil {
			return nil, took, err
		}
	}
	// loadLocks's order: the escapes by file, the spellings (the first few by file, then
	// a count), the retired directory.
	byAt := func(a, b indexedFinding) int { return a.at - b.at }
	slices.SortFunc(escapes, byAt)
	slices.SortFunc(spells, byAt)
	var findings []string
	for _, f := range escapes {
		findings = append(findings, f.s)
	}
	var sp spellingFindings
	for _, f := range spells {
		sp.add(f.s)
	}
	findings = append(findings, sp.list("lock")...)
	if !listed {
		return nil, took, nil
	}
	if ls.RetiredUnavailable != nil {
		findings = append(findings, "retired/ unreadable: "+ls.RetiredUnavailable.Detail)
	}
	return findings, took, nil
}

// lookupRefsOf is lookupRefs over the files ls, with the DB's leases held as has says.
func lookupRefsOf(ctx context.Context, r leases.Reader, p Probe, ls []*model.LockObs,
	has func(string) bool) map[string]*model.LeaseObs {
	out := map[string]*model.LeaseObs{}
	for _, lo := range ls {
		id := lo.Entry.Record.LeaseID
		if id == "" || has(id) || lo.Entry.Unreadable != nil {
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
