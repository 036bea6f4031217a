//go:build darwin || freebsd || netbsd

package locks

import (
	"syscall"
	"time"
)

// statMtime is the modification time fstat reported (the BSDs and macOS name the field
// Mtimespec).
func statMtime(st *syscall.Stat_t) time.Time {
	return time.Unix(int64(st.Mtimespec.Sec), int64(st.Mtimespec.Nsec))
}
