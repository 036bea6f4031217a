package watchdir

import (
	"errors"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"
)

// defaultDebounce is how long a Watcher gathers events before it reports a batch when
// Options.Debounce is zero.
const defaultDebounce = 30 * time.Millisecond

// defaultPoll is how often a Watcher polls its directory when the kernel refused a watch,
// and how often it tries to re-attach after the directory went away.
const defaultPoll = 2 * time.Second

// Change is one batch: the names (in the directory, sorted) that events touched, and
// Resync when the caller must list the whole directory again (the kernel dropped events,
// the watch failed, the directory went away or came back, or a poll saw it change); Err
// says why, when something failed.
type Change struct {
	Names  []string
	Resync bool
	Err    error
}

// Options tunes Watch. The zero value is usable.
type Options struct {
	// Debounce is the gathering window (defaultDebounce when zero).
	Debounce time.Duration
	// Quiet, when set, ends a window early once no event came for that long: one rename,
	// or one commit's writes, is reported Quiet after its last event instead of a whole
	// window after its first; a steady stream of events is still reported at least once
	// per Debounce.
	Quiet time.Duration
	// Poll is the period of the polling fallback and of the attempts to re-attach
	// (defaultPoll when zero).
	Poll time.Duration
	// Notify starts the kernel watch on the directory; nil uses Fsnotify. Tests inject
	// one that fails as an exhausted inotify limit does.
	Notify NotifyFunc
	// Relevant says which names in the directory count (nil: every name). Events on
	// other names are dropped, and a poll looks only at these.
	Relevant func(name string) bool
	// What names the directory in Mode's sentences ("the locks directory"; default
	// "the directory").
	What string
}

// Watcher reports changes in one directory on a channel. It reads no file. All its state
// is owned by one goroutine; Mode, Changes and Close are safe for concurrent use.
type Watcher struct {
	dir      string
	notify   NotifyFunc
	poll     time.Duration
	debounce time.Duration
	quiet    time.Duration
	relevant func(string) bool
	what     string
	out      chan Change
	done     chan struct{}
	once     sync.Once
	wg       sync.WaitGroup
	mode     atomic.Pointer[string]
}

// Watch starts watching dir. A directory the kernel will not watch for any reason but
// its resource limits (a missing directory, a permission error) is an error, returned
// as Notify returned it; at the limits the watcher polls instead and Mode says so.
func Watch(dir string, o Options) (*Watcher, error) {
	w := &Watcher{dir: filepath.Clean(dir), notify: o.Notify, poll: o.Poll, debounce: o.Debounce, quiet: o.Quiet,
		relevant: o.Relevant, what: o.What, out: make(chan Change), done: make(chan struct{})}
	if w.notify == nil {
		w.notify = Fsnotify
	}
	if w.poll <= 0 {
		w.poll = defaultPoll
	}
	if w.debounce <= 0 {
		w.debounce = defaultDebounce
	}
	if w.relevant == nil {
		w.relevant = func(string) bool { return true }
	}
	if w.what == "" {
		w.what = "the directory"
	}
	fw, err := w.notify(w.dir)
	if err != nil && !WatchLimit(err) {
		return nil, err
	}
	var p *poller
	if err != nil {
		p = w.startPolling(err)
	}
	w.wg.Add(1)
	go w.loop(fw, p)
	return w, nil
}

// Changes returns the channel of change batches; it is closed by Close, and only then.
func (w *Watcher) Changes() <-chan Change { return w.out }

// Mode is "" while the kernel watches the directory; otherwise it says, in a sentence
// for the user, how the directory is watched instead (polling, or waiting for a removed
// directory to come back).
func (w *Watcher) Mode() string {
	if m := w.mode.Load(); m != nil {
		return *m
	}
	return ""
}

func (w *Watcher) setMode(s string) { w.mode.Store(&s) }

// Close ends the watch and waits for its goroutine; the channel is closed. It is
// idempotent.
func (w *Watcher) Close() error {
	w.once.Do(func() {
		close(w.done)
		w.wg.Wait()
	})
	return nil
}

// state is what the loop holds between events.
type state struct {
	fw       *fsnotify.Watcher
	p        *poller // non-nil while polling instead of the kernel watch
	detached bool    // the directory went away (or the kernel watch ended): re-attach on ticks
	pending  map[string]bool
	resync   bool
	errs     []error
	timer    *time.Timer
	fire     <-chan time.Time
	first    time.Time // when the running window began
	tick     *time.Ticker
	tickC    <-chan time.Time
}

func (w *Watcher) loop(fw *fsnotify.Watcher, p *poller) {
	defer w.wg.Done()
	defer close(w.out)
	s := &state{fw: fw, p: p, pending: map[string]bool{}}
	defer func() {
		if s.fw != nil {
			s.fw.Close()
		}
		if s.timer != nil {
			s.timer.Stop()
		}
		if s.tick != nil {
			s.tick.Stop()
		}
	}()
	if p != nil {
		w.startTick(s)
	}
	for {
		var events <-chan fsnotify.Event
		var ferrs <-chan error
		if s.fw != nil {
			events, ferrs = s.fw.Events, s.fw.Errors
		}
		select {
		case <-w.done:
			return
		case ev, ok := <-events:
			switch {
			case !ok:
				w.detach(s, "the kernel watch on "+w.what+" ended", errors.New("watch ended"))
			case filepath.Clean(ev.Name) == w.dir && ev.Has(fsnotify.Remove|fsnotify.Rename):
				// The directory itself went away: its watch is gone with it (or would
				// follow the moved directory). Resync now; re-attach when it is back.
				w.detach(s, w.what+" was removed or moved", errors.New(w.what+" removed or moved"))
			default:
				if name := filepath.Base(ev.Name); filepath.Dir(filepath.Clean(ev.Name)) == w.dir && w.relevant(name) {
					s.pending[name] = true
					w.arm(s)
					w.hush(s)
				}
			}
		case err, ok := <-ferrs:
			if !ok {
				w.detach(s, "the kernel watch on "+w.what+" ended", errors.New("watch ended"))
				continue
			}
			s.resync = true
			if !errors.Is(err, fsnotify.ErrEventOverflow) {
				s.errs = append(s.errs, err)
			}
			w.arm(s)
		case <-s.tickC:
			w.onTick(s)
		case <-s.fire:
			s.timer, s.fire = nil, nil
			c := Change{Resync: s.resync, Err: errors.Join(s.errs...)}
			for n := range s.pending {
				c.Names = append(c.Names, n)
			}
			sort.Strings(c.Names)
			s.pending, s.resync, s.errs = map[string]bool{}, false, nil
			select {
			case w.out <- c:
			case <-w.done:
				return
			}
		}
	}
}

// arm starts the gathering window unless one is running.
func (w *Watcher) arm(s *state) {
	if s.timer == nil {
		s.timer, s.first = time.NewTimer(w.debounce), time.Now()
		s.fire = s.timer.C
	}
}

// hush moves the running window's end to Quiet after this event, when that is sooner
// than the window's own end.
func (w *Watcher) hush(s *state) {
	if w.quiet <= 0 || s.timer == nil {
		return
	}
	now := time.Now()
	end := s.first.Add(w.debounce)
	if q := now.Add(w.quiet); q.Before(end) {
		end = q
	}
	s.timer.Reset(end.Sub(now))
}

func (w *Watcher) startTick(s *state) {
	if s.tick == nil {
		s.tick = time.NewTicker(w.poll)
		s.tickC = s.tick.C
	}
}

func (w *Watcher) stopTick(s *state) {
	if s.tick != nil {
		s.tick.Stop()
		s.tick, s.tickC = nil, nil
	}
}

// detach drops the kernel watch, reports a resync at once, and tries to re-attach on
// every tick.
func (w *Watcher) detach(s *state, why string, err error) {
	if s.fw != nil {
		s.fw.Close()
	}
	s.fw, s.detached = nil, true
	w.setMode(why + "; watching for it to come back every " + w.poll.String())
	s.resync = true
	s.errs = append(s.errs, err)
	w.arm(s)
	w.startTick(s)
}

func (w *Watcher) onTick(s *state) {
	switch {
	case s.detached:
		fw, err := w.notify(w.dir)
		switch {
		case err == nil:
			s.fw, s.detached = fw, false
			w.setMode("")
			w.stopTick(s)
			s.resync = true
			w.arm(s)
		case WatchLimit(err):
			s.detached, s.p = false, w.startPolling(err)
			s.resync = true
			w.arm(s)
		}
	case s.p != nil && s.p.changed():
		s.resync = true
		w.arm(s)
	}
}
