package locks

import (
	"errors"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"
)

// DefaultDebounce is how long a watcher gathers events before it reports a
// batch: a rename storm (temp file, rename, directory fsync) becomes one change.
const DefaultDebounce = 30 * time.Millisecond

// Change is one batch of lock-file names that were created, written, renamed
// or removed in the watched directory. Resync asks the reader to re-read the
// whole directory (the kernel dropped events, or the watch failed); Err says why.
type Change struct {
	Names  []string
	Resync bool
	Err    error
}

// WatchOptions tunes Watch.
type WatchOptions struct {
	// Debounce is the gathering window (DefaultDebounce when zero).
	Debounce time.Duration
	// Poll is the period of the polling fallback, and of the attempts to re-attach after
	// the directory was removed or moved (DefaultPoll when zero).
	Poll time.Duration
	// Notify starts the kernel watch on a directory; nil uses fsnotify (NewWatcher, then
	// Add). Tests inject one that fails as an exhausted inotify limit does.
	Notify NotifyFunc
}

// Watcher reports changes in a locks directory on a channel. It reads no
// file: the reader re-reads the names with ReadFile (the atomic rename is the
// truth; a torn temp file is never reported, temp names start with a dot).
//
// It uses inotify (fsnotify) when it can. When the kernel refuses a watch for
// want of resources (ENOSPC: the inotify watch limit; EMFILE: the instance
// limit) it polls the directory instead, and Mode says so. When the watched
// directory is removed or moved away it reports a resync at once, then
// re-attaches when the directory is back.
type Watcher struct {
	dir    string
	notify NotifyFunc
	poll   time.Duration
	out    chan Change
	done   chan struct{}
	once   sync.Once
	wg     sync.WaitGroup
	mode   atomic.Pointer[string]
}

// Watch starts watching dir. The channel from Changes is closed when the
// watch ends (Close). A directory that cannot be watched for any reason but an
// exhausted inotify limit is an error.
func Watch(dir string, opts WatchOptions) (*Watcher, error) {
	w := &Watcher{dir: filepath.Clean(dir), notify: opts.Notify, poll: opts.Poll, out: make(chan Change), done: make(chan struct{})}
	if w.notify == nil {
		w.notify = fsnotifyDir
	}
	if w.poll <= 0 {
		w.poll = DefaultPoll
	}
	fw, err := w.notify(dir)
	if err != nil && !WatchLimit(err) {
		return nil, &PathError{Op: "watch", Path: dir, Err: err}
	}
	var p *poller
	if err != nil {
		p = w.startPolling(err)
	}
	d := opts.Debounce
	if d <= 0 {
		d = DefaultDebounce
	}
	w.wg.Add(1)
	go w.loop(fw, p, d)
	return w, nil
}

// Changes returns the channel of change batches.
func (w *Watcher) Changes() <-chan Change { return w.out }

// Mode is "" while inotify watches the directory; otherwise it says, in a sentence for
// the user, how the directory is watched instead (polling, or waiting for a removed
// directory to come back). Safe for concurrent use.
func (w *Watcher) Mode() string {
	if m := w.mode.Load(); m != nil {
		return *m
	}
	return ""
}

func (w *Watcher) setMode(s string) { w.mode.Store(&s) }

// Close ends the watch and waits for its goroutine; the channel is closed.
func (w *Watcher) Close() error {
	w.once.Do(func() {
		close(w.done)
		w.wg.Wait()
	})
	return nil
}

// relevant reports whether a name in the directory can be a lock or pointer.
func relevant(name string) bool {
	return !strings.HasPrefix(name, ".") && strings.HasSuffix(name, nameSuffix)
}

func (w *Watcher) loop(fw *fsnotify.Watcher, p *poller, debounce time.Duration) {
	defer w.wg.Done()
	defer close(w.out)
	defer func() {
		if fw != nil {
			fw.Close()
		}
	}()
	pending := map[string]bool{}
	resync := false
	var errs []error
	var timer *time.Timer
	var fire <-chan time.Time
	arm := func() {
		if timer == nil {
			timer = time.NewTimer(debounce)
			fire = timer.C
		}
	}
	var tick *time.Ticker
	var tickC <-chan time.Time
	startTick := func() {
		if tick == nil {
			tick = time.NewTicker(w.poll)
			tickC = tick.C
		}
	}
	if p != nil {
		startTick()
	}
	defer func() {
		if timer != nil {
			timer.Stop()
		}
		if tick != nil {
			tick.Stop()
		}
	}()
	detached := false
	for {
		var events <-chan fsnotify.Event
		var ferrs <-chan error
		if fw != nil {
			events, ferrs = fw.Events, fw.Errors
		}
		select {
		case <-w.done:
			return
		case ev, ok := <-events:
			if !ok {
				fw = nil
				continue
			}
			if filepath.Clean(ev.Name) == w.dir && ev.Has(fsnotify.Remove|fsnotify.Rename) {
				// The directory itself went away: its watch is gone with it (or would follow
				// the moved directory). Report a resync now; re-attach when it is back.
				fw.Close()
				fw, detached = nil, true
				w.setMode("the locks directory was removed or moved; watching for it to come back every " + w.poll.String())
				resync = true
				errs = append(errs, errors.New("locks directory removed or moved"))
				arm()
				startTick()
				continue
			}
			if name := filepath.Base(ev.Name); relevant(name) {
				pending[name] = true
				arm()
			}
		case err, ok := <-ferrs:
			if !ok {
				fw = nil
				continue
			}
			resync = true
			if !errors.Is(err, fsnotify.ErrEventOverflow) {
				errs = append(errs, err)
			}
			arm()
		case <-tickC:
			switch {
			case detached:
				nfw, err := w.notify(w.dir)
				switch {
				case err == nil:
					fw, detached = nfw, false
					w.setMode("")
					tick.Stop()
					tick, tickC = nil, nil
					resync = true
					arm()
				case WatchLimit(err):
					detached, p = false, w.startPolling(err)
					resync = true
					arm()
				}
			case p != nil && p.changed():
				resync = true
				arm()
			}
		case <-fire:
			timer, fire = nil, nil
			c := Change{Resync: resync, Err: errors.Join(errs...)}
			for n := range pending {
				c.Names = append(c.Names, n)
			}
			sort.Strings(c.Names)
			pending, resync, errs = map[string]bool{}, false, nil
			select {
			case w.out <- c:
			case <-w.done:
				return
			}
		}
	}
}
