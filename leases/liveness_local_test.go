package leases_test

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"steward/leases"
)

// The local probes answer as Liveness and WorktreePresence do for this host's name, without
// resolving it; a pid outside pid_t and an empty path stay unknown.
func TestLocalProbesMatchTheHostChecked(t *testing.T) {
	me, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, pid := range []int{os.Getpid(), 0, -1, math.MaxInt32 + 1, 1 << 40} {
		if got, want := leases.LocalLiveness(pid), leases.Liveness(pid, me); got != want {
			t.Errorf("pid %d: local %v, by host %v", pid, got, want)
		}
	}
	if leases.LocalLiveness(os.Getpid()) != leases.ProcessAlive {
		t.Error("this process is not alive to the local probe")
	}
	for _, p := range []string{dir, filepath.Join(dir, "gone"), ""} {
		if got, want := leases.LocalWorktreePresence(p), leases.WorktreePresence(p, me); got != want {
			t.Errorf("path %q: local %v, by host %v", p, got, want)
		}
	}
}
