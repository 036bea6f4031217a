package sim

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"steward/gitea"
	"steward/gitea/gitearec"
	"steward/govern"
	"steward/leases"
	"steward/model"
)

// Rates are the probabilities, per claim, of each way a worker departs from the normal
// cycle. Die, Stall, Ask and Vanish exclude each other and are dealt from a shuffled bag of
// 25 claims per worker (each rate rounded to 1/25); Contend (go for a held item first) and
// PR (open a pull request while working) are drawn per claim and combine with any of them.
type Rates struct {
	Die     float64 `json:"die"`
	Stall   float64 `json:"stall"`
	Ask     float64 `json:"ask"`
	Vanish  float64 `json:"vanish"`
	Contend float64 `json:"contend"`
	PR      float64 `json:"pr"`
}

// defaultRates are lively enough that a minute of the demo at DefaultSpeed shows every area,
// and calm enough that, with the demo's staff recovering what nobody else does, most claims
// on screen are alive.
func defaultRates() Rates {
	return Rates{Die: 0.12, Stall: 0.04, Ask: 0.16, Vanish: 0.04, Contend: 0.3, PR: 0.15}
}

// Hands are how a worker acts on coordination state: the governed core in this process (the
// default), or an MCP client of a `steward mcp` process (the demo's --workers mcp). Act
// performs one worker request (claim, heartbeat, release, ask) and returns the core's
// outcome; an error is a transport failure, after which the outcome may be unknown.
type Hands interface {
	Act(ctx context.Context, req govern.Request) (govern.Outcome, error)
	Close() error
}

// HandsFactory connects the hands of one worker process: the worker's name, its session and
// the pid recorded in its claims. It is called on the scheduler goroutine at every boot;
// the hands are closed when the process dies and when the run ends.
type HandsFactory func(ctx context.Context, worker, session string, pid int) (Hands, error)

// coreHands act through a governed core in this process.
type coreHands struct{ core *govern.Core }

func (h coreHands) Act(ctx context.Context, req govern.Request) (govern.Outcome, error) {
	_, out, err := h.core.Run(ctx, req, "")
	return out, err
}

func (h coreHands) Close() error { return nil }

// Tracker is the Gitea read side a worker inspects (a *gitea.Client satisfies it): the open
// backlog in one listing, every page.
type Tracker interface {
	OpenIssues(ctx context.Context) ([]gitearec.Issue, gitea.Health)
}

var _ Tracker = (*gitea.Client)(nil)

// PRMaker opens a pull request by author from branch head, as a worker's own git work
// would; it returns the PR number.
type PRMaker func(ctx context.Context, author, head, title string) (int64, error)

// Config is a fleet's set-up.
type Config struct {
	// Workspace is what the workers act on. Its Env should carry PolicyEnv(Speed).
	Workspace govern.Workspace
	// Audit records every attempt of every worker.
	Audit *govern.AuditLog
	// Owner and Repo name the Gitea repository of the backlog; Remote defaults to origin.
	Owner, Repo, Remote string
	// Backlog is the issue numbers the workers consider.
	Backlog []int64
	// Tracker reads the backlog's issues.
	Tracker Tracker
	// PRs opens half-finished pull requests; nil means workers open none.
	PRs PRMaker
	// Rules exclude items from the pool; zero means the default marker and blocked labels.
	Rules Rules
	// Workers is the fleet size (default 8).
	Workers int
	// Seed makes the run reproducible.
	Seed uint64
	// Speed compresses time (default DefaultSpeed); the lease policy must be scaled alike.
	Speed float64
	// Rates of misbehaviour; zero value means defaultRates.
	Rates *Rates
	// Virtual runs events back to back instead of pacing them against the wall clock
	// (tests of determinism). The core's clock is the virtual one either way.
	Virtual bool
	// Start is the wall time of virtual time zero; default time.Now at Run.
	Start time.Time
	// Procs starts worker processes; default sleepProcs(3600).
	Procs ProcStarter
	// OnEvent, when set, is called (on the scheduler goroutine) for every event.
	OnEvent func(Event)
	// Legacy is how many workers run the supervised system's older lock tool instead of
	// steward's core (legacy.go, package foreign); 0: none.
	Legacy int
	// Staff, when set, are the on-call operator and the maintainer around the fleet
	// (staff.go); nil: nobody but the person at the keyboard recovers or answers.
	Staff *Staff
	// Census, when set, samples the workspace every censusEvery of the run's own time with
	// this model configuration and books what each minute showed into Summary.Minutes.
	Census *model.Config
	// Hands, when set, connects each worker process's hands (an MCP client of steward mcp);
	// nil means every worker acts through a governed core in this process. The core's
	// clock is then the serving process's, so Virtual runs need the in-process core.
	Hands HandsFactory
}

// EventKind names what happened.
type EventKind string

// The event kinds a fleet reports.
const (
	eventClaim     EventKind = "claim"
	eventRefused   EventKind = "claim-refused"
	EventHeartbeat EventKind = "heartbeat"
	eventRelease   EventKind = "release"
	eventDeath     EventKind = "death"
	eventStall     EventKind = "stall"
	EventQuestion  EventKind = "question"
	eventPR        EventKind = "pr"
	eventVanish    EventKind = "worktree-vanished"
	eventRestart   EventKind = "restart"
	eventIdle      EventKind = "idle"
	EventError     EventKind = "error"
	// A legacy worker's claim and release (its own lock file, outside the core).
	eventLegacyClaim   EventKind = "legacy-claim"
	eventLegacyRelease EventKind = "legacy-release"
	// The staff: the on-call operator's recovery, the maintainer's answer, and the
	// maintainer's work on the tracker (a PR or an item closed, an issue filed).
	eventRecover  EventKind = "recover"
	eventAnswer   EventKind = "answer"
	eventMaintain EventKind = "maintain"
)

// Event is one thing a worker did. At is virtual time since the start, in the supervised
// system's time (uncompressed); Wall is when it happened on the compressed clock.
type Event struct {
	At      time.Duration `json:"at"`
	Wall    time.Time     `json:"wall"`
	Worker  string        `json:"worker"`
	Session string        `json:"session,omitempty"`
	Kind    EventKind     `json:"kind"`
	Item    int64         `json:"item,omitempty"`
	Detail  string        `json:"detail,omitempty"`
}

// String renders the event as one log line.
func (e Event) String() string {
	s := fmt.Sprintf("%8s  %-12s %-18s", e.Wall.Format("15:04:05"), e.Worker, e.Kind)
	if e.Item > 0 {
		s += fmt.Sprintf(" #%-3d", e.Item)
	}
	if e.Detail != "" {
		s += "  " + e.Detail
	}
	return s
}

// Summary is what a run came to.
type Summary struct {
	Seed    uint64                      `json:"seed"`
	Workers int                         `json:"workers"`
	Speed   float64                     `json:"speed"`
	Wall    time.Duration               `json:"wall_ns"`
	Counts  map[EventKind]int           `json:"counts"`
	First   map[EventKind]time.Duration `json:"first_wall_ns"`
	PIDs    []int                       `json:"pids"`
	// Minutes is the census, one entry per minute of the run (Config.Census).
	Minutes []Minute `json:"minutes,omitempty"`
	// Errors are the first MaxSummaryErrors error events, rendered (Event.String): a count
	// alone does not say what went wrong.
	Errors []string `json:"errors,omitempty"`
	Events []Event  `json:"-"`
}

// maxSummaryErrors bounds Summary.Errors.
const maxSummaryErrors = 20

// Fleet is a running set of simulated workers.
type Fleet struct {
	cfg     Config
	rules   Rules
	rates   Rates
	sched   *scheduler
	reader  leases.Reader
	workers []*worker
	legacy  []*legacyWorker
	staff   *staff
	census  *census
	// backlog is the issue numbers the workers consider: Config.Backlog and what the
	// maintainer filed since (scheduler goroutine only).
	backlog []int64
	// clockOf is the scheduler's clock, readable from any goroutine once Run has begun
	// (the in-process Gitea stamps its items with it).
	clockOf atomic.Pointer[scheduler]

	mu    sync.Mutex
	procs []Proc
	sum   Summary
}

// New prepares a fleet; nothing runs and nothing is written until Run.
func New(cfg Config) (*Fleet, error) {
	if cfg.Tracker == nil {
		return nil, errors.New("sim: Config.Tracker is required")
	}
	if cfg.Audit == nil {
		return nil, errors.New("sim: Config.Audit is required")
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 8
	}
	if cfg.Speed <= 0 {
		cfg.Speed = DefaultSpeed
	}
	if cfg.Remote == "" {
		cfg.Remote = "origin"
	}
	if cfg.Procs == nil {
		cfg.Procs = sleepProcs(3600)
	}
	if cfg.Hands != nil && cfg.Virtual {
		return nil, errors.New("sim: a virtual run needs the in-process core; Hands act on the serving process's clock")
	}
	rates := defaultRates()
	if cfg.Rates != nil {
		rates = *cfg.Rates
	}
	rules := cfg.Rules
	if len(rules.Markers) == 0 {
		rules.Markers = gitearec.DefaultMarkerLabels
	}
	if rules.Blocked == "" {
		rules.Blocked = gitearec.DefaultBlockedLabel
	}
	f := &Fleet{cfg: cfg, rules: rules, rates: rates, backlog: slices.Clone(cfg.Backlog)}
	f.sum = Summary{
		Seed:    cfg.Seed,
		Workers: cfg.Workers,
		Speed:   cfg.Speed,
		Counts:  map[EventKind]int{},
		First:   map[EventKind]time.Duration{},
	}
	return f, nil
}

// Run starts the workers and runs them until ctx ends or d of wall time (compressed
// time) has passed, then stops every worker process. It returns what happened.
func (f *Fleet) Run(ctx context.Context, d time.Duration) (Summary, error) {
	defer f.Close()
	start := f.cfg.Start
	if start.IsZero() {
		start = time.Now()
	}
	f.sched = newScheduler(start, f.cfg.Speed, f.cfg.Virtual)
	f.clockOf.Store(f.sched)
	for i := range f.cfg.Workers {
		w := f.newWorker(i)
		f.workers = append(f.workers, w)
		// Stagger the start: five supervised seconds apart.
		f.sched.at(time.Duration(i)*5*time.Second, w.boot)
	}
	for i := range f.cfg.Legacy {
		w := f.newLegacy(i)
		f.legacy = append(f.legacy, w)
		f.sched.at(time.Duration(f.cfg.Workers+i)*5*time.Second, w.boot)
	}
	if f.cfg.Staff != nil {
		f.staff = f.newStaff(*f.cfg.Staff)
		f.sched.at(f.staff.cfg.Every, f.staff.round)
	}
	if f.cfg.Census != nil {
		f.census = f.newCensus(*f.cfg.Census)
		every := time.Duration(float64(censusEvery) * f.cfg.Speed)
		var tick func()
		tick = func() { f.census.sample(); f.sched.after(every, tick) }
		f.sched.at(every, tick)
	}
	err := f.sched.run(ctx, time.Duration(float64(d)*f.cfg.Speed))
	for _, w := range f.workers {
		w.dropHands()
		w.core.Close()
	}
	if f.staff != nil {
		f.staff.close()
	}
	var minutes []Minute
	if f.census != nil {
		minutes = f.census.result()
	}
	if f.reader != nil {
		f.reader.Close()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sum.Minutes = minutes
	f.sum.Wall = time.Since(start)
	if f.cfg.Virtual {
		f.sum.Wall = time.Duration(float64(f.sched.now()) / f.cfg.Speed)
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		err = nil
	}
	return f.sum, err
}

// Clock is the fleet's clock — the wall time the running event is due at, the governed
// core's clock — once Run has begun, else the wall clock. Safe from any goroutine.
func (f *Fleet) Clock() time.Time {
	if s := f.clockOf.Load(); s != nil {
		return s.clock()
	}
	return time.Now()
}

func (f *Fleet) ctx() context.Context { return context.Background() }

// Close kills every worker process still running and reaps it. It is safe to call twice.
func (f *Fleet) Close() {
	f.mu.Lock()
	procs := f.procs
	f.procs = nil
	f.mu.Unlock()
	for _, p := range procs {
		_ = p.Kill()
	}
}

// Summary returns a copy of the counts so far (safe from any goroutine).
func (f *Fleet) Summary() Summary {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.sum
	s.Counts = map[EventKind]int{}
	for k, v := range f.sum.Counts {
		s.Counts[k] = v
	}
	s.First = map[EventKind]time.Duration{}
	for k, v := range f.sum.First {
		s.First[k] = v
	}
	s.PIDs = append([]int(nil), f.sum.PIDs...)
	s.Minutes = slices.Clone(f.sum.Minutes)
	s.Errors = append([]string(nil), f.sum.Errors...)
	s.Events = append([]Event(nil), f.sum.Events...)
	return s
}

func (f *Fleet) emit(e Event) {
	e.At = f.sched.now()
	e.Wall = f.sched.clock()
	f.mu.Lock()
	f.sum.Counts[e.Kind]++
	if _, ok := f.sum.First[e.Kind]; !ok {
		f.sum.First[e.Kind] = time.Duration(float64(e.At) / f.cfg.Speed)
	}
	f.sum.Events = append(f.sum.Events, e)
	if e.Kind == EventError && len(f.sum.Errors) < maxSummaryErrors {
		f.sum.Errors = append(f.sum.Errors, e.String())
	}
	f.mu.Unlock()
	if f.census != nil {
		f.census.event(e)
	}
	if f.cfg.OnEvent != nil {
		f.cfg.OnEvent(e)
	}
}

func (f *Fleet) startProc() (Proc, error) {
	p, err := f.cfg.Procs()
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	f.procs = append(f.procs, p)
	f.sum.PIDs = append(f.sum.PIDs, p.PID())
	f.mu.Unlock()
	return p, nil
}

// workerRand derives worker i's own source from the seed.
func workerRand(seed uint64, i int) *rand.Rand {
	return rand.New(rand.NewPCG(seed, uint64(i)*0x9e3779b97f4a7c15+1))
}
