package locks

import (
	"io/fs"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"steward/locks/lockrec"
)

// Listed is one name a listing of the locks directory found (List). It carries what the
// listing learnt of the file, so that Unchanged costs at most one lstat.
type Listed struct {
	Name string
	de   fs.DirEntry
}

// List lists the names in the locks directory dir that LoadDir reads as per-issue lock
// files (its Snapshot.Live): the ".json" names that are neither dot files (temp files)
// nor session pointers, whatever their type — a directory or FIFO under a lock's name is
// an unreadable lock, never nothing. It reads no file: ReadFile reads a name, Unchanged
// tells whether a name needs re-reading. The error is non-nil only when dir cannot be
// listed.
func List(dir string) ([]Listed, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, &PathError{Op: "list", Path: dir, Err: err}
	}
	out := make([]Listed, 0, len(ents))
	for _, de := range ents {
		name := de.Name()
		if strings.HasPrefix(name, ".") || !strings.HasSuffix(name, nameSuffix) || classify(name) != lockrec.ClassLive {
			continue
		}
		out = append(out, Listed{Name: name, de: de})
	}
	return out, nil
}

// Accessible reports why the locks directory dir cannot be listed now, nil when it can:
// one open of the directory, closed at once, nothing read. A permission taken away from
// it (chmod 000) raises no event that names a lock file, so a watcher asks this to tell.
func Accessible(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return &PathError{Op: "list", Path: dir, Err: err}
	}
	return f.Close()
}

// Stat looks at the listed file now (one lstat) and keeps what it saw, so that Unchanged
// costs no system call afterwards: a listing can then be taken and its files looked at
// away from the caller that compares them. A file gone since the listing is left as
// listed (Unchanged then looks again, and reads it as changed).
func (l *Listed) Stat() {
	if fi, err := l.de.Info(); err == nil {
		l.de = fs.FileInfoToDirEntry(fi)
	}
}

// Unchanged reports whether the listed file is still the one e was read from: a regular
// file with e's inode, size and modification time (a rename over the name changes the
// inode, an in-place write the size or time). Anything else — another type, a file gone
// since the listing — reads as changed.
func (l Listed) Unchanged(e lockrec.Entry) bool {
	if !l.de.Type().IsRegular() {
		return false
	}
	fi, err := l.de.Info()
	if err != nil {
		return false
	}
	ino, ok := inodeOf(fi)
	return ok && ino == e.Inode && fi.Size() == e.Size && fi.ModTime().Equal(e.ModTime)
}

// ReadListed reads the listed names of dir as ReadFile does, on up to GOMAXPROCS goroutines
// (decoding one lock is independent of another), and returns their entries in ls's order.
// dir's real path is resolved once and the listing's file types are used, as LoadDir does:
// a regular file costs its open, fstat, read and decode. ReadFile resolved the directory
// (an lstat per path component) and lstat'ed the file again for every name.
func ReadListed(dir string, ls []Listed) []lockrec.Entry {
	out := make([]lockrec.Entry, len(ls))
	real := realDir(dir)
	parallel(len(ls), func(i int, bp *[]byte) {
		out[i] = readEntry(dir, real, ls[i].Name, lockrec.ClassLive, ls[i].de.Type(), true, bp)
	})
	return out
}

// parallelMin is the fewest files per goroutine: a small directory is read on one.
const parallelMin = 64

// parallel runs f(i) for every i in [0, n) on up to GOMAXPROCS goroutines, each with a read
// buffer of its own, and returns when all have run.
func parallel(n int, f func(i int, bp *[]byte)) {
	w := min(runtime.GOMAXPROCS(0), n/parallelMin+1)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range w {
		wg.Add(1)
		go func() {
			defer wg.Done()
			bp := bufPool.Get().(*[]byte)
			defer bufPool.Put(bp)
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				f(i, bp)
			}
		}()
	}
	wg.Wait()
}
