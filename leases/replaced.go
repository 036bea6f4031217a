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
// opened: the file was removed, or another file was renamed over it (a new inode). The
// Reader's next read reopens the path (a removed file then reads as ErrNoDB), and its
// DataVersion moves; a watcher may also reopen itself when Replaced is true. It is false
// when the identity could not be read at open.
func (r *SQLiteReader) Replaced() bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if !r.id.ok {
		return false
	}
	now := fileIDOf(r.path)
	return now != r.id
}

// Accessible reports why the DB t names cannot be opened for reading now, nil when it can
// (or when t is a PostgreSQL URL: a server's refusal shows on the next query). A read the
// live model keeps open goes on reading a file whose permission was taken away (chmod
// 000) — the kernel checks a permission at open — while every new reader, the workers'
// and `steward status`, is refused; a watcher asks this to tell. The file is opened
// O_NONBLOCK (a FIFO never blocks it) and closed at once; nothing is read.
func Accessible(t Target) error {
	if t.Postgres() {
		return nil
	}
	f, err := os.OpenFile(t.Loc, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return err
	}
	return f.Close()
}
