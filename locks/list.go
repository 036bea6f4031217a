package locks

import (
	"io/fs"
	"os"
	"strings"
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
		if strings.HasPrefix(name, ".") || !strings.HasSuffix(name, nameSuffix) || classify(name) != ClassLive {
			continue
		}
		out = append(out, Listed{Name: name, de: de})
	}
	return out, nil
}

// Unchanged reports whether the listed file is still the one e was read from: a regular
// file with e's inode, size and modification time (a rename over the name changes the
// inode, an in-place write the size or time). Anything else — another type, a file gone
// since the listing — reads as changed.
func (l Listed) Unchanged(e Entry) bool {
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
