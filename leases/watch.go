package leases

import (
	"errors"
	"path/filepath"
	"sync"
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
// later is seen too. It reads nothing from the database.
type DBWatcher struct {
	fw   *fsnotify.Watcher
	out  chan DBChange
	done chan struct{}
	once sync.Once
	wg   sync.WaitGroup
}

// WatchDB starts watching the DB at path; debounce <= 0 uses
// DefaultWatchDebounce. The channel from Changes is closed when the watch ends.
func WatchDB(path string, debounce time.Duration) (*DBWatcher, error) {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, &DBError{Op: "watch", Path: path, Err: err}
	}
	if err := fw.Add(filepath.Dir(path)); err != nil {
		fw.Close()
		return nil, &DBError{Op: "watch", Path: path, Err: err}
	}
	if debounce <= 0 {
		debounce = DefaultWatchDebounce
	}
	w := &DBWatcher{fw: fw, out: make(chan DBChange), done: make(chan struct{})}
	base := filepath.Base(path)
	names := map[string]bool{base: true, base + "-wal": true, base + "-journal": true}
	w.wg.Add(1)
	go w.loop(names, debounce)
	return w, nil
}

// Changes returns the channel of changes.
func (w *DBWatcher) Changes() <-chan DBChange { return w.out }

// Close ends the watch and waits for its goroutine; the channel is closed.
func (w *DBWatcher) Close() error {
	var err error
	w.once.Do(func() {
		close(w.done)
		err = w.fw.Close()
		w.wg.Wait()
	})
	return err
}

func (w *DBWatcher) loop(names map[string]bool, debounce time.Duration) {
	defer w.wg.Done()
	defer close(w.out)
	var timer *time.Timer
	var fire <-chan time.Time
	var c DBChange
	pending := false
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
			// Chmod is noise (and -shm is never watched: readers write it).
			if !names[filepath.Base(ev.Name)] || ev.Op == fsnotify.Chmod {
				continue
			}
			pending = true
		case err, ok := <-w.fw.Errors:
			if !ok {
				return
			}
			pending, c.Resync = true, true
			if !errors.Is(err, fsnotify.ErrEventOverflow) {
				c.Err = errors.Join(c.Err, err)
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
