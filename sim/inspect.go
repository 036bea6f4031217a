package sim

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"steward/gitea/gitearec"
	"steward/leases"
	"steward/leases/leaserec"
	"steward/locks"
)

// inspect reads the three sources through their read APIs and returns the backlog as
// candidates. Any source it cannot read fully is an error: an unreadable source never
// makes an item look free.
func (f *Fleet) inspect(ctx context.Context) ([]candidate, error) {
	if f.reader == nil {
		r, err := leases.OpenReader(f.cfg.Workspace.DBTarget())
		if err != nil {
			return nil, fmt.Errorf("control-plane DB: %w", err)
		}
		f.reader = r
	}
	snap, err := f.reader.Snapshot(ctx, leases.ReadOptions{RecentTerminal: -1})
	if err != nil {
		return nil, fmt.Errorf("control-plane DB: %w", err)
	}
	if snap.LeasesHealth.Status == leaserec.HealthUnavailable {
		return nil, fmt.Errorf("leases unavailable: %s", strings.Join(snap.LeasesHealth.Reasons, "; "))
	}
	held := map[int64]string{}
	claimed := map[int64]bool{}
	for _, l := range snap.Leases {
		if l.Status == leaserec.StatusActive && f.ours(l.Work.Org, l.Work.Repo) {
			held[l.Work.Number] = l.SessionID
			claimed[l.Work.Number] = true
		}
	}
	ls, err := locks.LoadDir(f.cfg.Workspace.LocksDir, locks.LoadOptions{})
	if err != nil {
		return nil, fmt.Errorf("locks: %w", err)
	}
	for _, e := range ls.Live {
		if e.HasKey && f.ours(e.Key.Org, e.Key.Repo) {
			claimed[e.Key.Issue] = true
		}
	}
	open, h := f.cfg.Tracker.OpenIssues(ctx)
	if !h.OK() {
		// A backlog listing cut short never makes an item look closed.
		return nil, fmt.Errorf("gitea: %s", h.Reason)
	}
	byNumber := make(map[int64]gitearec.Issue, len(open))
	for _, is := range open {
		byNumber[is.Number] = is
	}
	out := make([]candidate, 0, len(f.backlog))
	for _, n := range f.backlog {
		is, ok := byNumber[n]
		// Not in the complete list of open issues: closed (or gone).
		out = append(out, candidate{
			Number: n, Title: is.Title, Body: is.Body, Labels: is.Labels,
			Open: ok, Claimed: claimed[n], HeldBy: held[n],
		})
	}
	return out, nil
}

func (f *Fleet) ours(org, repo string) bool { return org == f.cfg.Owner && repo == f.cfg.Repo }

// worktreeOf is where a claim's worktree lives: <repo-root>/branches/issue-N, with the
// repository root resolved as the core resolves it.
func (f *Fleet) worktreeOf(n int64) string {
	root, err := filepath.Abs(f.cfg.Workspace.RepoRoot)
	if err == nil {
		if r, err := filepath.EvalSymlinks(root); err == nil {
			root = r
		}
	}
	return filepath.Join(root, "branches", fmt.Sprintf("issue-%d", n))
}

func makeWorktree(path string) error { return os.MkdirAll(path, 0o700) }

func removeWorktree(path string) { _ = os.RemoveAll(path) }
