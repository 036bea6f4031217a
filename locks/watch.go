package locks

import (
	"strings"
	"time"

	"steward/watchdir"
)

// WatchOptions tunes Watch.
type WatchOptions struct {
	// Debounce is the gathering window (watchdir's default when zero).
	Debounce time.Duration
	// Quiet ends a window once no event came for that long (watchdir.Options.Quiet).
	Quiet time.Duration
	// Poll is the period of the polling fallback, and of the attempts to re-attach after
	// the directory was removed or moved (watchdir's default poll when zero).
	Poll time.Duration
	// Notify starts the kernel watch on a directory; nil uses fsnotify. Tests inject one
	// that fails as an exhausted inotify limit does.
	Notify watchdir.NotifyFunc
}

// Watch starts watching the locks directory dir with the one directory watcher
// (watchdir): each change batch names the lock and pointer files that changed (temp
// files, which start with a dot, and names without ".json" are left out; the atomic
// rename is the truth, a torn temp file is never reported). The watcher reads no file:
// the reader re-reads the names with ReadFile, and lists the directory again (List) on a
// resync. It polls at the kernel's watch limits and re-attaches after the directory is
// removed or moved; Mode says so. A directory that cannot be watched for any other reason
// is a *PathError.
func Watch(dir string, opts WatchOptions) (*watchdir.Watcher, error) {
	// A zero Debounce is watchdir's default.
	w, err := watchdir.Watch(
		dir,
		watchdir.Options{Debounce: opts.Debounce, Quiet: opts.Quiet, Poll: opts.Poll, Notify: opts.Notify,
			Relevant: relevant, What: "the locks directory"},
	)
	if err != nil {
		return nil, &PathError{Op: "watch", Path: dir, Err: err}
	}
	return w, nil
}

// relevant reports whether a name in the directory can be a lock or pointer.
func relevant(name string) bool {
	return !strings.HasPrefix(name, ".") && strings.HasSuffix(name, nameSuffix)
}
