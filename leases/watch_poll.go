package leases

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
)

// DefaultDBPoll is how often a DBWatcher polls the DB files when inotify is not available.
const DefaultDBPoll = 2 * time.Second

// DBWatchOptions tunes WatchDBWith.
type DBWatchOptions struct {
	// Debounce is the gathering window (DefaultWatchDebounce when zero).
	Debounce time.Duration
	// Poll is the period of the polling fallback (DefaultDBPoll when zero).
	Poll time.Duration
	// Notify starts the kernel watch on the DB's directory; nil uses fsnotify (NewWatcher,
	// then Add). Tests inject one that fails as an exhausted inotify limit does.
	Notify func(dir string) (*fsnotify.Watcher, error)
}

func fsnotifyDir(dir string) (*fsnotify.Watcher, error) {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	if err := fw.Add(dir); err != nil {
		fw.Close()
		return nil, err
	}
	return fw, nil
}

// WatchLimit reports whether err is the kernel refusing a watch for want of resources:
// ENOSPC from inotify_add_watch (fs.inotify.max_user_watches exhausted) or EMFILE from
// inotify_init1 (fs.inotify.max_user_instances, or the process's file limit). These, and
// only these, make WatchDBWith poll instead; any other failure is returned.
func WatchLimit(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EMFILE)
}

// dbPoller remembers the DB files' size, mtime and inode, to tell whether they changed.
type dbPoller struct {
	dir   string
	names []string
	last  string
}

func (w *DBWatcher) startPolling(dir string, names []string, cause error) *dbPoller {
	m := "polling every " + w.poll.String() + ": inotify unavailable (" + cause.Error() + ")"
	w.mode.Store(&m)
	p := &dbPoller{dir: dir, names: names}
	p.last = p.signature()
	return p
}

func (p *dbPoller) changed() bool {
	s := p.signature()
	if s == p.last {
		return false
	}
	p.last = s
	return true
}

func (p *dbPoller) signature() string {
	var b []byte
	for _, n := range p.names {
		b = append(b, n...)
		if fi, err := os.Stat(filepath.Join(p.dir, n)); err == nil {
			b = append(b, ' ')
			b = strconv.AppendInt(b, fi.Size(), 10)
			b = append(b, ' ')
			b = strconv.AppendInt(b, fi.ModTime().UnixNano(), 10)
			if st, ok := fi.Sys().(*syscall.Stat_t); ok {
				b = append(b, ' ')
				b = strconv.AppendUint(b, uint64(st.Ino), 10)
			}
		}
		b = append(b, '\n')
	}
	return string(b)
}
