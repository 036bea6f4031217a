package leases

import (
	"errors"
	"math"
	"os"
	"sync"
	"syscall"
)

// hostname is this machine's name, resolved once per process: the re-probe asks it for every
// record every few seconds, and resolving it each time was a sixth of an idle workbench's CPU
// at 10,000 claims. A machine renamed while steward runs is seen after a restart.
var hostname = sync.OnceValues(os.Hostname)

// Liveness reports whether process pid on host is alive, using kill(pid, 0).
// A record from another host, an unknown local host name, or a pid <= 0 is
// ProcessUnknown, never dead; EPERM (the process exists but belongs to
// someone else) is alive. A pid above the kernel's 32-bit pid_t range is
// unknown too: kill(2) would see it truncated (2^40 becomes 0, this process
// group; 2^32-1 becomes -1, every process) and answer for another process.
func Liveness(pid int, host string) ProcessState {
	if pid <= 0 || pid > math.MaxInt32 {
		return ProcessUnknown
	}
	me, err := hostname()
	if err != nil || host == "" || host != me {
		return ProcessUnknown
	}
	err = syscall.Kill(pid, 0)
	switch {
	case err == nil, errors.Is(err, syscall.EPERM):
		return ProcessAlive
	case errors.Is(err, syscall.ESRCH):
		return ProcessDead
	}
	return ProcessUnknown
}
