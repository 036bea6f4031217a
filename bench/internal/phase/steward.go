package phase

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"

	"steward/app"
	"steward/bench/internal/fleet"
	"steward/bench/internal/headless"
	"steward/govern"
	"steward/model"
	"steward/tui"
)

// workbench is steward's workbench as `steward ui` runs it: the session app.Open assembles
// (the governed core, the live model, the source that previews each snapshot's orphan
// actions and redacts steward's secrets), the root model on its options, and the root's
// own feed (Root.Feed, as tui.Run starts it: each snapshot digested off the UI goroutine),
// here into a headless program. The one addition is the bridge between the session's
// snapshots and the feed, which notes when an awaited snapshot arrives.
type workbench struct {
	sess   *app.Session
	prog   *headless.Program
	br     *bridge
	cancel context.CancelFunc
	fed    chan struct{}
}

// bridge is the workbench's snapshot source: it forwards the session's snapshots to the
// root's feed. When a snapshot satisfies the awaited predicate it notes the instant and
// makes the probe time the frame that draws it.
type bridge struct {
	src  tui.SnapshotSource
	out  chan *model.Snapshot
	mu   sync.Mutex
	want func(*model.Snapshot) bool
	got  chan time.Time
	done chan struct{}
}

func (b *bridge) Snapshots() <-chan *model.Snapshot { return b.out }

func (b *bridge) Refresh() { b.src.Refresh() }

func (b *bridge) await(want func(*model.Snapshot) bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	select { // a match left over from a round that gave up
	case <-b.got:
	default:
	}
	b.want = want
}

func (b *bridge) run(ctx context.Context, p *headless.Program) {
	defer close(b.done)
	defer close(b.out)
	for s := range b.src.Snapshots() {
		b.mu.Lock()
		if b.want != nil && b.want(s) {
			b.want = nil
			p.Screen.Reset()
			p.Probe.Expect(func(m tea.Msg) bool { return tui.SnapshotOf(m) == s })
			b.got <- time.Now()
		}
		b.mu.Unlock()
		select {
		case b.out <- s:
		case <-ctx.Done():
			return
		}
	}
}

func (b *bridge) wait(timeout time.Duration) (time.Time, error) {
	select {
	case at := <-b.got:
		return at, nil
	case <-time.After(timeout):
		b.mu.Lock()
		b.want = nil
		b.mu.Unlock()
		return time.Time{}, fmt.Errorf("no snapshot showed the change within %s", timeout)
	}
}

// settings are the workspace's settings as `steward ui --no-gitea` on the fleet would
// resolve them with no config file and no GITEA_LEASE_POLICY_* variables, acting as an
// operator at the fleet's clock.
func (c *Config) settings(clock func() time.Time) app.Settings {
	m := c.Meta
	return app.Settings{LocksDir: m.LocksDir, DBPath: m.DBPath, RepoRoot: m.RepoRoot, AuditPath: m.AuditPath,
		Gitea: app.Gitea{Off: true}, Env: func(string) (string, bool) { return "", false },
		Role: govern.RoleOperator, Audit: app.AuditWrite, Now: clock,
		History: &app.History{StateDir: filepath.Join(filepath.Dir(m.LocksDir), "state")}}
}

// startWorkbench starts the workbench cold and returns the time to its first snapshot and
// to the first frame that draws it.
func (c *Config) startWorkbench(
	ctx context.Context,
	clock func() time.Time,
) (*workbench, time.Duration, time.Duration, error) {
	m := c.Meta
	ctx, cancel := context.WithCancel(ctx)
	t0 := time.Now()
	sess, err := app.Open(ctx, c.settings(clock))
	if err != nil {
		cancel()
		return nil, 0, 0, err
	}
	sess.KeepAttention()
	// Watch starts the live model — every source read once and the first snapshot
	// published before it returns — and the source that annotates and redacts it.
	if err := sess.Watch(ctx); err != nil {
		sess.Close()
		cancel()
		return nil, 0, 0, err
	}
	snap := time.Since(t0)
	br := &bridge{
		src:  sess.Workbench.Source,
		out:  make(chan *model.Snapshot),
		got:  make(chan time.Time, 1),
		done: make(chan struct{}),
	}
	opts := sess.Workbench
	opts.Source = br
	root := tui.New(opts)
	w := &workbench{sess: sess, br: br, cancel: cancel, fed: make(chan struct{})}
	w.prog = headless.Start(ctx, root, headless.Options{Width: c.Width, Height: c.Height, FPS: c.FPS})
	w.prog.Probe.Expect(func(msg tea.Msg) bool { return tui.SnapshotOf(msg) != nil })
	go br.run(ctx, w.prog)
	go func() { defer close(w.fed); root.Feed(ctx, w.prog.Send) }()
	at, err := w.prog.Screen.Wait(timeout)
	if err != nil {
		w.close()
		return nil, 0, 0, err
	}
	if s := sess.Live.Current(); s == nil || len(s.Claims) != m.N {
		n := 0
		if s != nil {
			n = len(s.Claims)
		}
		w.close()
		return nil, 0, 0, fmt.Errorf("first snapshot has %d claims, want %d", n, m.N)
	}
	return w, snap, at.Sub(t0), nil
}

func (w *workbench) close() {
	w.prog.Stop()
	w.cancel()
	w.sess.Close()
	<-w.br.done
	<-w.fed
}

// key sends one key press and waits for its frame.
func (w *workbench) key(k tea.KeyPressMsg) (time.Duration, error) {
	return w.prog.Timed(k, isKey, timeout)
}

// nav sends a key that moves the session to where the next measure starts. Its frame is
// waited for briefly and not timed: a key that changes nothing (a view already shown) draws
// no frame.
func (w *workbench) nav(ks ...tea.KeyPressMsg) error {
	for _, k := range ks {
		if _, err := w.prog.Timed(k, isKey, time.Second); err != nil && !errors.Is(err, headless.ErrNoFrame) {
			return err
		}
	}
	return nil
}

func isKey(m tea.Msg) bool { _, ok := m.(tea.KeyPressMsg); return ok }

// Keys used by both sides.
var (
	keyDown      = tea.KeyPressMsg{Code: 'j', Text: "j"}
	keyUp        = tea.KeyPressMsg{Code: 'k', Text: "k"}
	keyTop       = tea.KeyPressMsg{Code: 'g', Text: "g"}
	keyFilter    = tea.KeyPressMsg{Code: '/', Text: "/"}
	keySeven     = tea.KeyPressMsg{Code: '7', Text: "7"}
	keyTwo       = tea.KeyPressMsg{Code: '2', Text: "2"}
	keySort      = tea.KeyPressMsg{Code: 's', Text: "s"}
	keyBackspace = tea.KeyPressMsg{Code: tea.KeyBackspace}
	keyEnter     = tea.KeyPressMsg{Code: tea.KeyEnter}
	keyEsc       = tea.KeyPressMsg{Code: tea.KeyEscape}
)

// StewardCold starts the workbench cold Cold times (a fresh live model, core and program
// each time, garbage collected in between).
func StewardCold(ctx context.Context, c *Config) (*Result, error) {
	stop := c.profile("cold")
	defer stop()
	return c.cold(func() (time.Duration, time.Duration, func(), error) {
		w, snap, frame, err := c.startWorkbench(ctx, c.clock())
		if err != nil {
			return 0, 0, nil, err
		}
		return snap, frame, w.close, nil
	})
}

// StewardLive runs one workbench session: a cold start, the Claims view, idle CPU,
// heartbeats of the selected claim's lock file and lease with its detail open, then key
// presses.
func StewardLive(ctx context.Context, c *Config) (*Result, error) {
	r := newResult()
	clock := c.clock()
	w, _, _, err := c.startWorkbench(ctx, clock)
	if err != nil {
		return nil, err
	}
	defer w.close()
	// The Claims view lists what needs attention first; s sorts it by the Item column (the
	// item's text), so g selects the claim whose item text sorts first — the one timed.
	if err := w.nav(keyTwo, keySort); err != nil { // the Claims view, by item
		return nil, err
	}
	first := firstByItemText(w.sess.Live.Current().Claims)
	c.idle(ctx, r)
	// The changes come before the keys: at 50,000 claims they are slow, and the session
	// must end before the fleet's heartbeats grow stale (five minutes of its clock).
	if err := w.nav(keyTop, keyEnter); err != nil { // the first claim's detail
		return nil, err
	}
	n := first.Item.Number
	stop := c.profile("lock")
	err = c.rounds(func(i int) error { return w.lockRound(c, r, n, i, clock) })
	stop()
	if err != nil {
		return nil, fmt.Errorf("lock rename: %w", err)
	}
	stop = c.profile("db")
	err = w.dbRounds(c, r, first, clock)
	stop()
	if err != nil {
		return nil, fmt.Errorf("db commit: %w", err)
	}
	if err := w.nav(keyEsc); err != nil { // close the detail
		return nil, err
	}
	stop = c.profile("keys")
	err = w.keys(c, r)
	stop()
	if err != nil {
		return nil, err
	}
	if late := clock().Sub(c.Meta.Base); late > 4*time.Minute {
		r.note(
			"the session ran %s past the fleet's heartbeats: stale warnings may have started to fire",
			late.Round(time.Second),
		)
	}
	c.heapProfile("heap")
	r.HWM = hwm()
	return r, nil
}

// keys times j/k moves, filter keystrokes and view switches on the Claims view.
func (w *workbench) keys(c *Config, r *Result) error {
	timed := func(m string, ks ...tea.KeyPressMsg) error {
		return c.rounds(func(i int) error {
			d, err := w.key(ks[i%len(ks)])
			if err == nil {
				r.add(m, d)
			}
			return err
		})
	}
	if err := timed(KeyMove, keyDown, keyUp); err != nil {
		return fmt.Errorf("move: %w", err)
	}
	if err := w.nav(keyFilter); err != nil {
		return err
	}
	if err := timed(KeyFilter, keySeven, keyBackspace); err != nil {
		return fmt.Errorf("filter: %w", err)
	}
	if err := w.nav(keyEsc); err != nil {
		return err
	}
	if err := timed(KeyView, keySeven, keyTwo); err != nil { // Sessions ↔ Claims
		return fmt.Errorf("view: %w", err)
	}
	return nil
}

// firstByItemText returns the claim the Claims view, sorted by its Item column, shows first.
func firstByItemText(cs []*model.Claim) *model.Claim {
	first := cs[0]
	for _, c := range cs[1:] {
		if c.Item.String() < first.Item.String() {
			first = c
		}
	}
	return first
}

// claimOf returns the claim on item n (claims are in item order).
func claimOf(s *model.Snapshot, n int64) *model.Claim {
	i := sort.Search(len(s.Claims), func(i int) bool { return s.Claims[i].Item != nil && s.Claims[i].Item.Number >= n })
	if i < len(s.Claims) && s.Claims[i].Item != nil && s.Claims[i].Item.Number == n {
		return s.Claims[i]
	}
	return nil
}

func (w *workbench) lockRound(c *Config, r *Result, n int64, i int, clock func() time.Time) error {
	b, err := prepareLockBeat(c.Meta, n, i, clock())
	if err != nil {
		return err
	}
	want := b.expires + " (" // the evidence value is "<expires_at> (<state>)"
	w.br.await(func(s *model.Snapshot) bool {
		cl := claimOf(s, n)
		if cl == nil {
			return false
		}
		for _, e := range cl.Evidence {
			if e.Field == "work_lease.expires_at" && strings.HasPrefix(e.Value, want) {
				return true
			}
		}
		return false
	})
	t0 := time.Now()
	if err := b.commit(); err != nil {
		return err
	}
	return w.timeChange(r, LockSnapshot, LockFrame, t0)
}

// timeChange waits for the snapshot that shows a change made at t0, then for its frame.
func (w *workbench) timeChange(r *Result, snapM, frameM string, t0 time.Time) error {
	at, err := w.br.wait(timeout)
	if err != nil {
		return err
	}
	r.add(snapM, at.Sub(t0))
	fat, err := w.prog.Screen.Wait(timeout)
	if err != nil {
		return err
	}
	r.add(frameM, fat.Sub(t0))
	return nil
}

func (w *workbench) dbRounds(c *Config, r *Result, cl *model.Claim, clock func() time.Time) error {
	db, err := fleet.OpenWriter(c.Meta.DBPath)
	if err != nil {
		return err
	}
	defer db.Close()
	n := cl.Item.Number
	return c.rounds(func(i int) error {
		b, err := prepareDBBeat(db, c.Meta, cl.LeaseID, cl.SessionID, i, clock())
		if err != nil {
			return err
		}
		w.br.await(func(s *model.Snapshot) bool {
			x := claimOf(s, n)
			return x != nil && x.ExpiresAt.Equal(b.expires)
		})
		t0 := time.Now()
		if err := b.tx.Commit(); err != nil {
			return err
		}
		return w.timeChange(r, DBSnapshot, DBFrame, t0)
	})
}

// refresh asks the session for a full re-read.
func (w *workbench) refresh() { w.sess.Workbench.Source.Refresh() }
