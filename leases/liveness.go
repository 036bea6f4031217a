package leases

import (
	"errors"
	"math"
	"os"
	"strings"
	"sync"
	"syscall"

	"steward/leases/leaserec"
)

// hostname is this machine's name (HostName), resolved once per process: the re-probe asks
// it for every record every few seconds, and resolving it each time was a sixth of an idle
// workbench's CPU at 10,000 claims. A machine renamed while steward runs is seen after a
// restart.
var hostname = sync.OnceValues(HostName)

// envHostName names this node when its OS host name does not tell the fleet's nodes apart
// (containers with generated names, two nodes sharing a machine): every record steward
// writes names the node by it, and only records naming it are probed here.
const envHostName = "STEWARD_HOSTNAME"

// HostName is this node's name: $STEWARD_HOSTNAME when set, else the OS host name.
func HostName() (string, error) {
	if h := strings.TrimSpace(os.Getenv(envHostName)); h != "" {
		return h, nil
	}
	return os.Hostname()
}

// Liveness reports whether process pid on host is alive, using kill(pid, 0).
// A record from another host, an unknown local host name, or a pid <= 0 is
// ProcessUnknown, never dead; EPERM (the process exists but belongs to
// someone else) is alive. A pid above the kernel's 32-bit pid_t range is
// unknown too: kill(2) would see it truncated (2^40 becomes 0, this process
// group; 2^32-1 becomes -1, every process) and answer for another process.
func Liveness(pid int, host string) leaserec.ProcessState {
	if pid <= 0 || pid > math.MaxInt32 {
		return leaserec.ProcessUnknown
	}
	me, err := hostname()
	if err != nil || host == "" || host != me {
		return leaserec.ProcessUnknown
	}
	err = syscall.Kill(pid, 0)
	switch {
	case err == nil, errors.Is(err, syscall.EPERM):
		return leaserec.ProcessAlive
	case errors.Is(err, syscall.ESRCH):
		return leaserec.ProcessDead
	}
	return leaserec.ProcessUnknown
}

// RowHost is the host whose process table and file system decide a DB row's owner pid and
// worktree, and why. A row that records its host (steward's sessions.host and
// leases.owner_host) is judged on that host. The seed's schema records none: its
// control plane is single-host — a lease's owner_pid is os.getpid() of the process on the
// DB's own host (seed S9, control_plane_db.py:1145, L14099) and its restart coordinator
// checks a session's pid with kill(pid, 0) and no host at all (L39327) — so a hostless row
// belongs to the host the DB was written on: dbHost when the operator says that is another
// machine (config db_host, flag --db-host), else this one, the same rule steward applies
// to a lock file without a host field. why is empty for a row that records its host.
func RowHost(recorded, dbHost, self string) (host, why string) {
	switch {
	case recorded != "":
		return recorded, ""
	case dbHost != "" && dbHost != self:
		return dbHost, "no host recorded: the DB was written on " + dbHost + " (db_host), so its pids and worktrees are " +
			"not evidence here"
	}
	return self, "no host recorded: judged on this host, where the DB is (the seed's control plane is single-host)"
}
