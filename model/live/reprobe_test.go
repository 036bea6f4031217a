package live

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"steward/leases"
	"steward/leases/leaserec"
	"steward/model"
)

// TestReprobeSpreadsWorktrees: a pass probes every local owner's liveness (each pid once)
// and only its share of the worktrees, so that over WorktreeEvery/ProbeEvery passes each
// worktree is looked at exactly once; a vanished worktree is seen within those passes; a
// full pass (Refresh) looks at every worktree.
func TestReprobeSpreadsWorktrees(t *testing.T) {
	var mu sync.Mutex
	lives := 0
	trees := map[string]int{}
	gone := map[string]bool{}
	probe := Probe{Host: "here",
		Liveness: func(int, string) leaserec.ProcessState { mu.Lock(); lives++; mu.Unlock(); return leaserec.ProcessAlive },
		Worktree: func(path, _ string) leases.WorktreeReport {
			mu.Lock()
			defer mu.Unlock()
			trees[path]++
			if gone[path] {
				return leases.WorktreeReport{State: leaserec.WorktreeMissing, Looked: true}
			}
			return leases.WorktreeReport{State: leaserec.WorktreePresent, Looked: true}
		}}
	l := New(Workspace{}, Options{Probe: &probe, ProbeEvery: 5 * time.Second, WorktreeEvery: 15 * time.Second})
	const n = 60
	for i := range n {
		name := fmt.Sprintf("lock-%d.json", i)
		lo := lock(name, int64(i+1), "s", "", time.Hour, model.LivenessAlive)
		lo.Entry.Record.WorktreePath = fmt.Sprintf("/repo/branches/w%d", i)
		l.e.SetLock(name, &lo)
	}
	reset := func() { lives = 0; clear(trees) }
	for pass := range 3 {
		l.reprobe(false)
		if lives != 1 {
			t.Fatalf("pass %d: %d liveness probes, want 1 (one pid)", pass, lives)
		}
		lives = 0
	}
	if len(trees) != n {
		t.Fatalf("3 passes with WorktreeEvery = 3 × ProbeEvery looked at %d worktrees, want all %d", len(trees), n)
	}
	for p, c := range trees {
		if c != 1 {
			t.Fatalf("%s probed %d times in one period, want once", p, c)
		}
	}
	reset()
	l.reprobe(false)
	if len(trees) == 0 || len(trees) == n {
		t.Fatalf("one pass looked at %d of %d worktrees: not spread", len(trees), n)
	}
	gone["/repo/branches/w7"] = true
	for range 3 {
		l.reprobe(false)
	}
	if lo, _ := l.e.Lock("lock-7.json"); lo.Worktree != model.WorktreeMissing {
		t.Fatalf("a vanished worktree is %v after a whole period", lo.Worktree)
	}
	if lo, _ := l.e.Lock("lock-8.json"); lo.Worktree != model.WorktreePresent {
		t.Fatalf("another worktree is %v", lo.Worktree)
	}
	reset()
	l.reprobe(true)
	if len(trees) != n {
		t.Fatalf("a full pass looked at %d worktrees, want %d", len(trees), n)
	}
}
