package watchdir

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/fsnotify/fsnotify"
)

// NotifyFunc starts a kernel watch on dir and returns the watcher holding it.
type NotifyFunc func(dir string) (*fsnotify.Watcher, error)

// Fsnotify is the default NotifyFunc: a new fsnotify watcher (an inotify instance on
// Linux) watching dir.
func Fsnotify(dir string) (*fsnotify.Watcher, error) {
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
// inotify_init1 (fs.inotify.max_user_instances exhausted, or the process's file limit).
// These, and only these, make a Watcher poll instead: any other failure (a missing
// directory, a permission error) is the caller's to report.
func WatchLimit(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EMFILE)
}

// poller remembers what a listing of the directory looked like, to tell whether it
// changed.
type poller struct {
	dir      string
	relevant func(string) bool
	last     string
}

// startPolling switches the watcher to polling because the kernel refused a watch.
func (w *Watcher) startPolling(cause error) *poller {
	w.setMode("polling every " + w.poll.String() + ": inotify unavailable (" + cause.Error() + ")")
	p := &poller{dir: w.dir, relevant: w.relevant}
	p.last = p.signature()
	return p
}

// changed lists the directory and reports whether any relevant name came or went, or
// changed size, modification time or inode since the last call (or the directory
// appeared or vanished).
func (p *poller) changed() bool {
	s := p.signature()
	if s == p.last {
		return false
	}
	p.last = s
	return true
}

// signature is a cheap digest of the directory: one line per relevant entry. A symbolic
// link is described by what it points to (a write to the target changes what a reader of
// the name reads), or by the link itself when it points nowhere.
func (p *poller) signature() string {
	ents, err := os.ReadDir(p.dir)
	if err != nil {
		return "unreadable: " + err.Error()
	}
	var b []byte
	for _, de := range ents {
		name := de.Name()
		if !p.relevant(name) {
			continue
		}
		b = append(b, name...)
		path := filepath.Join(p.dir, name)
		fi, err := os.Stat(path)
		if err != nil {
			fi, err = os.Lstat(path)
		}
		if err == nil {
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
