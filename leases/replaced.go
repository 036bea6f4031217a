package leases

import (
	"os"
	"syscall"
)

// fileID is a file's identity on disk: device and inode.
type fileID struct {
	dev, ino uint64
	ok       bool
}

func fileIDOf(path string) fileID {
	fi, err := os.Stat(path)
	if err != nil {
		return fileID{}
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}
	}
	return fileID{dev: uint64(st.Dev), ino: uint64(st.Ino), ok: true}
}

// Replaced reports whether the path the Reader was opened on no longer names the file it
// opened: the file was removed, or another file was renamed over it (a new inode). A
// Reader keeps reading the file it opened — PRAGMA data_version never moves for commits to
// the new file — so a watcher must reopen when Replaced is true. It is false when the
// identity could not be read at open.
func (r *SQLiteReader) Replaced() bool {
	if !r.id.ok {
		return false
	}
	now := fileIDOf(r.path)
	return now != r.id
}
