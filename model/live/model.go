package live

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"steward/leases"
	"steward/leases/leaserec"
	"steward/locks"
	"steward/model"
	"steward/watchdir"
)

// Options tunes a Model. The zero value is usable.
type Options struct {
	Config model.Config
	// Probe makes liveness and worktree observations (NewProbe(RepoRoot) when zero).
	Probe *Probe
	// Now, when set, is the instant every verdict is judged at (a test's clock, a fixed
	// instant). When nil the verdicts are judged at the control-plane DB's clock on
	// PostgreSQL — the clock every transition fences against, read as an offset from
	// HostNow on every read of the DB (at most once a second) and carried on by this host's
	// monotonic clock between reads — and at HostNow on SQLite, whose only clock it is.
	Now func() time.Time
	// HostNow is this host's clock (time.Now when nil).
	HostNow func() time.Time
	// Resync is the period of the cheap full resync that heals missed events
	// (default 30 s): the directory is re-listed and only files whose inode,
	// size or mtime moved are re-read; the DB is re-read when data_version
	// moved, and in full when a scoped read (see Model) was applied since the
	// last full read — on a SQLite DB that full read runs beside the loop on a
	// reader of its own, so that a change landing meanwhile is not held behind
	// it; what scoped reads applied meanwhile is read again after it.
	Resync time.Duration
	// AccessEvery is how often the lock directory and a SQLite DB file are opened to see
	// whether they still can be (default 1 s): a permission taken away (chmod 000) raises
	// no event that names a lock or the DB, and an open reader goes on reading a file a
	// new one could not open; a source that can no longer be opened is read again at once
	// (and reads unavailable, with the reason), and read again when it can be once more.
	AccessEvery time.Duration
	// ProbeEvery is how often owner liveness is re-probed for records on this host
	// (default 5 s): a process can die with no file changing.
	ProbeEvery time.Duration
	// WorktreeEvery is how often each worktree on this host is re-probed: a worktree
	// rarely vanishes, and a stat of every worktree each ProbeEvery was most of an idle
	// fleet's CPU. The worktrees are spread over the probe passes of that period (each
	// pass looks at its share), never all at once; Refresh looks at every one. By default
	// (zero) watchedWorktreeEvery while the kernel watches the branches directory — an
	// entry created, removed or renamed there re-probes its worktrees at once — else 12 ×
	// ProbeEvery, a minute.
	WorktreeEvery time.Duration
	// Gitea, when set, is polled every GiteaEvery (default 60 s).
	Gitea      GiteaFacts
	GiteaEvery time.Duration
	// NoGitea is what the Gitea source reads when Gitea is nil: not configured unless it
	// says otherwise — unavailable with the reason for a configured Gitea that could not
	// be set up (never "not configured"), or not read on request.
	NoGitea model.SourceHealth
	// Debounce is the lock watcher's gathering window (default
	// defaultLockDebounce).
	Debounce time.Duration
	// Quiet ends a watcher's gathering window once no event came for that long
	// (defaultQuiet when zero; watchdir.Options.Quiet), for the lock, DB and branches
	// watchers: a rename or a commit reaches the model just after its last event, not a
	// whole window after its first.
	Quiet time.Duration
	// Notify starts the kernel (inotify) watches; nil uses fsnotify. When the kernel
	// refuses a watch for want of resources the watchers poll every Poll (default 2 s)
	// and the sources' health says so. Tests inject a failing Notify.
	Notify watchdir.NotifyFunc
	Poll   time.Duration
	// ListenBackoff bounds the wait between attempts to LISTEN again after the
	// connection to a PostgreSQL control plane was lost (5 s when zero).
	ListenBackoff time.Duration
}

// defaultLockDebounce is the Model's lock-watcher gathering window. A lock write
// (temp file, write, rename over the name, directory fsync) reaches the
// watcher as one event on the lock's name — the temp names are ignored — so
// the window only has to gather the names of a burst of writes; a burst
// longer than the window is read in a few batches, each costing what it
// holds. Shorter than watchdir's default (30 ms): the window is most of a
// rename's latency.
const defaultLockDebounce = 10 * time.Millisecond

// defaultQuiet is Options.Quiet's default: a lock rename is one event and a commit's
// writes come within microseconds of each other, so a gap of 2 ms ends their batch (the
// DB's 20 ms window and the locks' 10 ms were most of a change's way to the screen).
const defaultQuiet = 2 * time.Millisecond

// Model keeps a Snapshot of a workspace current: fsnotify on the locks
// directory (one changed file re-read with locks.ReadFile), on the DB and its
// WAL (confirmed with PRAGMA data_version; events read past a cursor, in the
// same read transaction) — on PostgreSQL the notices of committed transitions
// (LISTEN, confirmed by the WAL position the same way) — a heap of time deadlines, an optional Gitea poll
// and a periodic cheap resync. A DB commit whose events all name a work item
// costs what it changed: only those items' leases and the sessions involved
// are re-read (leases.Reader.ReadScope, indexed lookups). A commit that wrote
// no event (a foreign writer) re-reads the leases/sessions snapshot in full,
// and so does the next periodic resync after any scoped read: it heals a
// commit without events that arrived in the same batch as one with events.
// All state is owned by one goroutine; Current and Snapshots are safe for
// concurrent use.
type Model struct {
	ws      Workspace
	opt     Options
	probe   Probe
	e       *model.Engine
	view    *locks.Tracked // the live lock files as the loop last read them (LockView)
	cur     atomic.Pointer[model.Snapshot]
	out     chan *model.Snapshot
	refresh chan chan struct{}
	stats   chan chan model.Stats
	giteaCh chan giteaResult
	reader  leases.Reader
	dv      int64
	cursor  int64
	last    dbRead
	fullN   atomic.Int64 // full DB reads applied
	scopedN atomic.Int64 // scoped DB reads applied
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	once    sync.Once
	lw      *watchdir.Watcher
	bw      *watchdir.Watcher // the branches directory (watchBranches); nil when not watched
	dw      dbWatcher
	closed  chan struct{}
	wake    chan struct{}
	started atomic.Bool
	// passes counts the re-probe passes: which worktrees a pass looks at.
	passes uint64
	// bgC receives the background full read of the DB in flight (nil when none): a full
	// re-read of a large DB took about a second at 50,000 claims, and every change that
	// landed meanwhile waited behind it. bgScope gathers what scoped reads applied while it
	// was in flight (read again right after it is applied: its rows may be older); bgStale
	// is set when a full read was applied here meanwhile (the background one is then older
	// than what is held, and dropped). evHealth is the last events read's health.
	bgC      chan bgFull
	bgScope  leases.Scope
	bgStale  bool
	evHealth leaserec.Health
	// bgHook, when set (tests), runs in the background read after its snapshot was read.
	bgHook func()
	// lsC receives the periodic listing of the lock directory taken beside the loop (nil
	// when none is in flight): listing and looking at 50,000 files held a lock change
	// behind it. lsRead names the files read by events since it began (newer than the
	// listing: neither re-read nor dropped by it); lsStale is set when a listing was
	// applied here meanwhile (the one in flight is then older, and dropped). lsHook, when
	// set (tests), runs beside the loop after the listing was taken.
	lsC     chan lockRead
	lsRead  map[string]bool
	lsStale bool
	lsHook  func()
	// denied says which sources the last access check could not open (checkAccess).
	denied struct{ locks, db bool }
	// clk is the DB's clock as last read (nil: never read, or no DB clock): see now.
	clk atomic.Pointer[clockRead]
	// busy is set while the DB is held by another writer past the busy timeout: the
	// last read is kept and the DB reads degraded until a read succeeds again.
	busy bool
}

// New returns a Model for ws; nothing is read until Start.
func New(ws Workspace, opt Options) *Model {
	if opt.HostNow == nil {
		opt.HostNow = time.Now
	}
	if opt.Resync <= 0 {
		opt.Resync = 30 * time.Second
	}
	if opt.AccessEvery <= 0 {
		opt.AccessEvery = time.Second
	}
	if opt.ProbeEvery <= 0 {
		opt.ProbeEvery = 5 * time.Second
	}
	if opt.Debounce <= 0 {
		opt.Debounce = defaultLockDebounce
	}
	if opt.Quiet <= 0 {
		opt.Quiet = defaultQuiet
	}
	if opt.GiteaEvery <= 0 {
		opt.GiteaEvery = time.Minute
	}
	p := NewProbe(ws.RepoRoot)
	if opt.Probe != nil {
		p = *opt.Probe
	}
	if p.DBHost == "" {
		p.DBHost = ws.DBHost
	}
	return &Model{
		ws: ws, opt: opt, probe: p, e: model.NewEngine(opt.Config), view: locks.NewTracked(ws.LocksDir),
		out: make(chan *model.Snapshot, 1), refresh: make(chan chan struct{}), stats: make(chan chan model.Stats),
		giteaCh: make(chan giteaResult), closed: make(chan struct{}), wake: make(chan struct{}, 1),
	}
}

// Start reads every source once, publishes the first snapshot, and starts
// watching. It returns an error only when the locks directory cannot be
// watched; an unreadable DB is an unavailable source in the snapshot.
func (l *Model) Start(ctx context.Context) error {
	ctx, l.cancel = context.WithCancel(ctx)
	now := l.now()
	l.e.SetHealth(model.SourceGitea, NoGitea(l.opt.NoGitea, now))
	// The lock files are listed, read, decoded and their owners and worktrees probed (on
	// every core) beside the DB's read; the engine is fed here, in one goroutine.
	var lr lockRead
	_, observe := model.LocksHere(l.ws.Host, l.probe.Host, now)
	read := make(chan struct{})
	if observe {
		at := now
		go func() { defer close(read); lr = readAllLocks(l.ws.LocksDir, l.probe, at) }()
	} else {
		close(read)
	}
	l.reloadDB(ctx, now, true)
	now = l.now() // the DB's clock, once the first read has read it
	<-read
	if observe {
		l.applyLocks(lr, now, true, nil)
		if l.reader != nil && l.last.ok {
			l.lookupMissingRefs(ctx) // the leases these locks name that the DB's read lacks
		}
	} else {
		l.resyncLocks(now, true) // sets the source's not-observed health
	}
	l.e.Flush(now)
	l.publish(now)
	var err error
	if _, observe := model.LocksHere(l.ws.Host, l.probe.Host, now); !observe {
		// The lock directory is on another host: nothing here to watch.
	} else if l.lw, err = locks.Watch(l.ws.LocksDir, locks.WatchOptions{
		Debounce: l.opt.Debounce, Quiet: l.opt.Quiet, Notify: l.opt.Notify, Poll: l.opt.Poll,
	}); err != nil {
		l.cancel()
		if l.dw != nil { // the first read may have started one
			l.dw.Close()
			l.dw = nil
		}
		if l.reader != nil {
			l.reader.Close()
			l.reader = nil
		}
		return err
	}
	l.noteWatchModes()
	l.watchBranches()
	// The first read starts the DB watcher when it opens the DB; start one here only when
	// it did not (a second would leak an inotify instance and its goroutines).
	if l.dw == nil {
		if l.dw, err = l.watchDB(); err != nil {
			l.dw = nil // the directory may not exist yet: the resync still re-reads the DB
		}
	}
	l.started.Store(true)
	l.wg.Add(1)
	go l.loop(ctx)
	if l.opt.Gitea != nil {
		l.wg.Add(1)
		go l.pollGitea(ctx)
	}
	return nil
}

// Snapshots returns a channel that holds the latest unread snapshot (older
// unread ones are dropped). It is closed by Close.
func (l *Model) Snapshots() <-chan *model.Snapshot { return l.out }

// LockView is the lock directory as this model last read it, kept current by the loop
// (locks.Tracked): the previews of a snapshot's orphans look items up in it instead of
// listing and stat'ing the whole directory per snapshot. Judge it only while the lock
// source reads ok: a directory that cannot be read leaves the view as last read.
func (l *Model) LockView() *locks.Tracked { return l.view }

// Current returns the latest snapshot (nil before Start).
func (l *Model) Current() *model.Snapshot { return l.cur.Load() }

// Refresh runs a full resync now (re-probing liveness too) and returns once
// its snapshot is published; it returns at once after Close.
func (l *Model) Refresh() {
	if !l.started.Load() {
		return
	}
	done := make(chan struct{})
	select {
	case l.refresh <- done:
		select {
		case <-done:
		case <-l.closed:
		}
	case <-l.closed:
	}
}

// Stats reports the sizes of what the live model holds, asked of its loop (zero after
// Close or before Start). A long-running model holding more than a fresh one on the same
// workspace shows here where.
func (l *Model) Stats() model.Stats {
	if !l.started.Load() {
		return model.Stats{}
	}
	ch := make(chan model.Stats, 1)
	select {
	case l.stats <- ch:
		return <-ch
	case <-l.closed:
		return model.Stats{}
	}
}

// Wake makes the loop re-check the deadline heap now: with a test clock
// (Options.Now) real timers do not follow the clock. Only items whose
// deadline passed are re-derived.
func (l *Model) Wake() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// Close stops every goroutine and closes the snapshot channel.
func (l *Model) Close() error {
	l.once.Do(func() {
		if l.cancel != nil {
			l.cancel()
		}
		l.wg.Wait()
		if l.lw != nil {
			l.lw.Close()
		}
		if l.bw != nil {
			l.bw.Close()
		}
		if l.dw != nil {
			l.dw.Close()
		}
		if l.reader != nil {
			l.reader.Close()
		}
		close(l.out)
	})
	return nil
}

func (l *Model) publish(now time.Time) {
	s := l.e.Publish(now)
	l.cur.Store(s)
	select {
	case <-l.out:
	default:
	}
	l.out <- s
}

// clockRead is one read of the DB's clock: its instant and this host's clock (with its
// monotonic reading) in the middle of the query.
type clockRead struct {
	db, host time.Time
}

// now is the instant verdicts are judged at: Options.Now when set; else the DB's clock as
// last read, carried on by this host's monotonic clock since (a jump of this host's wall
// clock moves nothing); else this host's clock.
func (l *Model) now() time.Time {
	if l.opt.Now != nil {
		return l.opt.Now()
	}
	h := l.opt.HostNow()
	if c := l.clk.Load(); c != nil {
		return c.db.Add(h.Sub(c.host))
	}
	return h
}

// clockEvery bounds how often the DB's clock is read: at most once per this, on a read of
// the DB (a notice, the resync).
const clockEvery = time.Second

// readClock reads the DB's clock when it has one (PostgreSQL) and no instant is fixed: the
// offset from this host's clock, measured around the query. A failed read keeps the last
// one (the DB's source health says why the DB cannot be read).
func (l *Model) readClock(ctx context.Context) {
	if l.opt.Now != nil || l.reader == nil {
		return
	}
	ck, ok := l.reader.(leases.Clock)
	if !ok {
		return
	}
	if c := l.clk.Load(); c != nil && l.opt.HostNow().Sub(c.host) < clockEvery {
		return
	}
	t0 := l.opt.HostNow()
	db, err := ck.Clock(ctx)
	t1 := l.opt.HostNow()
	if err != nil {
		return
	}
	mid := t0.Add(t1.Sub(t0) / 2)
	l.clk.Store(&clockRead{db: db, host: mid})
	l.e.SetClock(model.Clock{Source: model.ClockDB, Offset: db.Sub(mid.Round(0)), ReadAt: mid.Round(0)})
}
