package locks

import (
	"errors"
	"path/filepath"
	"sort"
	"strings"
	"sync"
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
}

// Watcher reports changes in a locks directory on a channel. It reads no
// file: the reader re-reads the names with ReadFile (the atomic rename is the
// truth; a torn temp file is never reported, temp names start with a dot).
type Watcher struct {
	fw   *fsnotify.Watcher
	out  chan Change
	done chan struct{}
	once sync.Once
	wg   sync.WaitGroup
}

// Watch starts watching dir. The channel from Changes is closed when the
// watch ends (Close, or the directory's watch failing for good).
func Watch(dir string, opts WatchOptions) (*Watcher, error) {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, &PathError{Op: "watch", Path: dir, Err: err}
	}
	if err := fw.Add(dir); err != nil {
		fw.Close()
		return nil, &PathError{Op: "watch", Path: dir, Err: err}
	}
	d := opts.Debounce
	if d <= 0 {
		d = DefaultDebounce
	}
	w := &Watcher{fw: fw, out: make(chan Change), done: make(chan struct{})}
	w.wg.Add(1)
	go w.loop(d)
	return w, nil
}

// Changes returns the channel of change batches.
func (w *Watcher) Changes() <-chan Change { return w.out }

// Close ends the watch and waits for its goroutine; the channel is closed.
func (w *Watcher) Close() error {
	var err error
	w.once.Do(func() {
		close(w.done)
		err = w.fw.Close()
		w.wg.Wait()
	})
	return err
}

// relevant reports whether a name in the directory can be a lock or pointer.
func relevant(name string) bool {
	return !strings.HasPrefix(name, ".") && strings.HasSuffix(name, nameSuffix)
}

func (w *Watcher) loop(debounce time.Duration) {
	defer w.wg.Done()
	defer close(w.out)
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
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		select {
		case <-w.done:
			return
		case ev, ok := <-w.fw.Events:
			if !ok {
				return
			}
			if name := filepath.Base(ev.Name); relevant(name) {
				pending[name] = true
				arm()
			}
		case err, ok := <-w.fw.Errors:
			if !ok {
				return
			}
			resync = true
			if !errors.Is(err, fsnotify.ErrEventOverflow) {
				errs = append(errs, err)
			}
			arm()
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
