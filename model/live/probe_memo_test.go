package live

import (
	"testing"

	"steward/leases"
	"steward/leases/leaserec"
	"steward/model"
)

// One re-probe pass asks each (pid, host) and (path, host) once: a joined lock and lease
// name the same owner and worktree.
func TestProbeMemoAsksOnce(t *testing.T) {
	lives, trees := 0, 0
	p := Probe{Host: "here", Roots: leases.BranchesOnly("/repo/branches"),
		Liveness: func(int, string) leaserec.ProcessState { lives++; return leaserec.ProcessAlive },
		Worktree: func(string, string) leases.WorktreeReport {
			trees++
			return leases.WorktreeReport{State: leaserec.WorktreePresent}
		}}
	m := p.memo()
	for range 3 {
		if o, _ := m.owner(42, "here"); o != model.LivenessAlive {
			t.Fatalf("owner %v", o)
		}
		if w := m.worktree("/repo/branches/a", "here"); w.State != leaserec.WorktreePresent {
			t.Fatalf("worktree %v", w)
		}
	}
	m.owner(43, "here")
	m.worktree("/repo/branches/b", "here")
	if lives != 2 || trees != 2 {
		t.Fatalf("%d liveness and %d worktree probes, want 2 and 2", lives, trees)
	}
	if p.memo(); lives != 2 { // a new pass starts empty, and the original probe is untouched
		t.Fatal("memo changed the probe it was made from")
	}
	if o, _ := p.owner(42, "here"); o != model.LivenessAlive || lives != 3 {
		t.Fatalf("the original probe remembered: %d calls", lives)
	}
}
