package locks

import (
	"syscall"
	"time"
)

// statMtime is the modification time fstat reported (Linux names the field Mtim).
func statMtime(st *syscall.Stat_t) time.Time {
	return time.Unix(int64(st.Mtim.Sec), int64(st.Mtim.Nsec))
}
