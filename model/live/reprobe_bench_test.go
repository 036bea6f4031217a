package live

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"steward/model"
)

// BenchmarkReprobe10k is one idle re-probe pass over 10,000 local claims (a lock, whose
// owner is this process and whose worktree exists, each): the work an idle workbench does
// every ProbeEvery. Allocations per pass do not depend on the machine's load.
func BenchmarkReprobe10k(b *testing.B) {
	root := b.TempDir()
	probe := NewProbe(root)
	l := New(Workspace{RepoRoot: root}, Options{Probe: &probe})
	for i := range 10000 {
		name := fmt.Sprintf("lock-%d.json", i)
		wt := filepath.Join(root, "branches", fmt.Sprintf("issue-%d", i))
		if err := os.MkdirAll(wt, 0o700); err != nil {
			b.Fatal(err)
		}
		lo := lock(name, int64(i+1), "s", "", time.Hour, model.LivenessAlive)
		lo.Entry.Record.WorktreePath = wt
		pid := int64(os.Getpid())
		lo.Entry.Record.PID = &pid
		n := probe.ObserveLock(lo.Entry, now)
		if n.Worktree != model.WorktreePresent || n.Owner != model.LivenessAlive {
			b.Fatalf("fixture: %v %v (%s)", n.Worktree, n.Owner, n.WorkWhy)
		}
		l.e.SetLock(name, &n)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		reprobeOnce(l)
	}
}
