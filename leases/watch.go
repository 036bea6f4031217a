package leases

import (
	"errors"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"
)

// DefaultWatchDebounce is how long WatchDB gathers file events before it
// reports one change (a commit writes the WAL several times).
const DefaultWatchDebounce = 20 * time.Millisecond

// DBChange says the DB file or its WAL changed. It is a hint: confirm a
// commit with Reader.DataVersion before re-reading. Resync is set when events
// were dropped; Err says why the watch reported an error.
type DBChange struct {
	Resync bool
	Err    error
}

// DBWatcher reports changes of a control-plane DB file and its -wal and
// -journal companions. It watches the directory, so a WAL created or removed
// later is seen too, and so is a new file renamed over the DB. It reads
// nothing from the database. When the kernel refuses an inotify watch for want
// of resources it polls the three files instead (see WatchDBWith), and Mode
// says so.
type DBWatcher struct {
	notify func(dir string) (*fsnotify.Watcher, error)
	poll   time.Duration
	out    chan DBChange
	done   chan struct{}
	once   sync.Once
	wg     sync.WaitGroup
	mode   atomic.Pointer[string]
}

// WatchDB starts watching the DB at path; debounce <= 0 uses
// DefaultWatchDebounce. The channel from Changes is closed when the watch ends.
func WatchDB(path string, debounce time.Duration) (*DBWatcher, error) {
	return WatchDBWith(path, DBWatchOptions{Debounce: debounce})
}

// WatchDBWith starts watching the DB at path with opts.
func WatchDBWith(path string, opts DBWatchOptions) (*DBWatcher, error) {
	w := &DBWatcher{notify: opts.Notify, poll: opts.Poll, out: make(chan DBChange), done: make(chan struct{})}
	if w.notify == nil {
		w.notify = fsnotifyDir
	}
	if w.poll <= 0 {
		w.poll = DefaultDBPoll
	}
	base := filepath.Base(path)
	names := []string{base, base + "-wal", base + "-journal"}
	fw, err := w.notify(filepath.Dir(path))
	if err != nil && !WatchLimit(err) {
		return nil, &DBError{Op: "watch", Path: path, Err: err}
	}
	var p *dbPoller
	if err != nil {
		p = w.startPolling(filepath.Dir(path), names, err)
	}
	debounce := opts.Debounce
	if debounce <= 0 {
		debounce = DefaultWatchDebounce
	}
	set := map[string]bool{}
	for _, n := range names {
		set[n] = true
	}
	w.wg.Add(1)
	go w.loop(fw, p, set, debounce)
	return w, nil
}

// Changes returns the channel of changes.
func (w *DBWatcher) Changes() <-chan DBChange { return w.out }

// Mode is "" while inotify watches the DB's directory; otherwise a sentence saying how
// the DB is watched instead. Safe for concurrent use.
func (w *DBWatcher) Mode() string {
	if m := w.mode.Load(); m != nil {
		return *m
	}
	return ""
}

// Close ends the watch and waits for its goroutine; the channel is closed.
func (w *DBWatcher) Close() error {
	w.once.Do(func() {
		close(w.done)
		w.wg.Wait()
	})
	return nil
}

func (w *DBWatcher) loop(fw *fsnotify.Watcher, p *dbPoller, names map[string]bool, debounce time.Duration) {
	defer w.wg.Done()
	defer close(w.out)
	var timer *time.Timer
	var fire <-chan time.Time
	var tickC <-chan time.Time
	var c DBChange
	pending := false
	if p != nil {
		tick := time.NewTicker(w.poll)
		defer tick.Stop()
		tickC = tick.C
	}
	defer func() {
		if timer != nil {
			timer.Stop()
		}
		if fw != nil {
			fw.Close()
		}
	}()
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
				return
			}
			// Chmod is noise (and -shm is never watched: readers write it).
			if !names[filepath.Base(ev.Name)] || ev.Op == fsnotify.Chmod {
				continue
			}
			pending = true
		case err, ok := <-ferrs:
			if !ok {
				return
			}
			pending, c.Resync = true, true
			if !errors.Is(err, fsnotify.ErrEventOverflow) {
				c.Err = errors.Join(c.Err, err)
			}
		case <-tickC:
			if p.changed() {
				pending = true
			}
		case <-fire:
			timer, fire = nil, nil
			out := c
			c, pending = DBChange{}, false
			select {
			case w.out <- out:
			case <-w.done:
				return
			}
			continue
		}
		if pending && timer == nil {
			timer = time.NewTimer(debounce)
			fire = timer.C
		}
	}
}
