//go:build linux

package leases

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// ofdSupported says whether readLock can hold a lock that no other descriptor's close
// drops: Linux's open-file-description locks.
const ofdSupported = true

// readLock takes a read lock on the shared range of SQLite's lock bytes through f, as an
// open-file-description lock: it conflicts with SQLite's own (process-associated) locks
// in every process, this one included, and closing some other descriptor of the file
// never drops it. It does not wait: errLockBusy means a writer holds the range.
func readLock(f *os.File) error { return ofd(f, unix.F_RDLCK) }

// readUnlock releases what readLock took.
func readUnlock(f *os.File) error { return ofd(f, unix.F_UNLCK) }

func ofd(f *os.File, typ int16) error {
	lk := unix.Flock_t{Type: typ, Whence: 0, Start: sharedFirst, Len: sharedSize}
	err := unix.FcntlFlock(f.Fd(), unix.F_OFD_SETLK, &lk)
	if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EACCES) {
		return errLockBusy
	}
	return err
}
