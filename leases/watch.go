package leases

import (
	"path/filepath"
	"time"

	"steward/watchdir"
)

// defaultWatchDebounce is how long WatchDB gathers file events before it
// reports one change (a commit writes the WAL several times).
const defaultWatchDebounce = 20 * time.Millisecond

// DBWatchOptions tunes WatchDBWith.
type DBWatchOptions struct {
	// Debounce is the gathering window (defaultWatchDebounce when zero).
	Debounce time.Duration
	// Quiet ends a window once no event came for that long (watchdir.Options.Quiet): a
	// commit's writes are reported just after its last one. A hint that comes before the
	// commit is visible is no loss: the caller re-checks DataVersion.
	Quiet time.Duration
	// Poll is the period of the polling fallback and of the attempts to re-attach after
	// the DB's directory was removed or moved (watchdir's default poll when zero).
	Poll time.Duration
	// Notify starts the kernel watch on the DB's directory; nil uses fsnotify. Tests
	// inject one that fails as an exhausted inotify limit does.
	Notify watchdir.NotifyFunc
}

// WatchDB starts watching the DB at path; debounce <= 0 uses
// defaultWatchDebounce. The channel from Changes is closed when the watch ends.
func WatchDB(path string, debounce time.Duration) (*watchdir.Watcher, error) {
	return WatchDBWith(path, DBWatchOptions{Debounce: debounce})
}

// WatchDBWith starts watching the control-plane DB at path with the one directory
// watcher (watchdir): it watches the DB's directory for the DB file and its -wal and
// -journal companions, so a WAL created or removed later is seen, and so is a new file
// renamed over the DB (-shm is never watched: readers write it). A change is a hint:
// confirm a commit with Reader.DataVersion before re-reading. It reads nothing from the
// database. It polls at the kernel's watch limits and re-attaches after the directory is
// removed or moved; Mode says so. A DB whose directory cannot be watched for any other
// reason is a *DBError.
func WatchDBWith(path string, opts DBWatchOptions) (*watchdir.Watcher, error) {
	d := opts.Debounce
	if d <= 0 {
		d = defaultWatchDebounce
	}
	base := filepath.Base(path)
	names := map[string]bool{base: true, base + "-wal": true, base + "-journal": true}
	w, err := watchdir.Watch(
		filepath.Dir(path),
		watchdir.Options{Debounce: d, Quiet: opts.Quiet, Poll: opts.Poll, Notify: opts.Notify,
			Relevant: func(n string) bool { return names[n] }, What: "the DB's directory"},
	)
	if err != nil {
		return nil, &DBError{Op: "watch", Path: path, Err: err}
	}
	return w, nil
}
