package locks

import (
	"errors"
	"os"
	"syscall"
	"time"
)

var (
	errTooLarge   = errors.New("file larger than MaxFileSize")
	errNotRegular = errors.New("not a regular file")
)

type statInfo struct {
	size  int64
	mtime time.Time
	ino   uint64
}

// readRegular opens path without following a final symlink and without
// blocking (O_NONBLOCK: a FIFO swapped in after the directory listing opens
// at once and is then refused by fstat), checks it is a regular file of at
// most MaxFileSize bytes, and returns an owned copy of its bytes. The read
// goes through the pooled buffer *bp, so a scan allocates once per file.
func readRegular(path string, bp *[]byte) ([]byte, statInfo, error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	for err == syscall.EINTR {
		fd, err = syscall.Open(path, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	}
	if err != nil {
		return nil, statInfo{}, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return nil, statInfo{}, &os.PathError{Op: "fstat", Path: path, Err: err}
	}
	info := statInfo{size: st.Size, mtime: statMtime(&st), ino: uint64(st.Ino)}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return nil, info, errNotRegular
	}
	if st.Size > MaxFileSize {
		return nil, info, errTooLarge
	}
	buf := (*bp)[:0]
	for {
		if len(buf) == cap(buf) {
			if cap(buf) > MaxFileSize {
				return nil, info, errTooLarge // grew past the limit while read
			}
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := syscall.Read(fd, buf[len(buf):cap(buf)])
		if err == syscall.EINTR || err == syscall.EAGAIN {
			continue
		}
		if err != nil {
			*bp = buf[:0]
			return nil, info, &os.PathError{Op: "read", Path: path, Err: err}
		}
		if n == 0 {
			break
		}
		buf = buf[:len(buf)+n]
		if len(buf) > MaxFileSize {
			*bp = buf[:0]
			return nil, info, errTooLarge
		}
	}
	*bp = buf[:0]
	out := make([]byte, len(buf))
	copy(out, buf)
	return out, info, nil
}

// inodeOf is the inode number of a file the os package stat'ed (false when the platform
// does not report one).
func inodeOf(fi os.FileInfo) (uint64, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return uint64(st.Ino), true
}
