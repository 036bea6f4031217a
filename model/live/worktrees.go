package live

import (
	"path/filepath"
	"strings"
	"time"

	"steward/watchdir"
)

// watchedWorktreeEvery is how often each worktree is re-probed by default while the kernel
// watches the branches directory: a worktree created, removed or renamed there is an
// event on that directory and is re-probed at once (reprobeWorktrees), so the periodic
// pass only has to catch what raises no event there — a change deeper in a nested path,
// or behind a link. Without the watch the period stays a minute (Options.WorktreeEvery).
const watchedWorktreeEvery = 5 * time.Minute

// watchBranches starts the watch of the branches directory worktrees live in, when there
// is one on this host and the kernel watches it. A directory that is missing, cannot be
// watched, or only polled (the inotify limits) gets no watch: the periodic pass probes
// its worktrees, as before (a poll of every entry each few seconds would cost more).
func (l *Model) watchBranches() {
	dir := l.probe.Roots.Branches
	if dir == "" {
		return
	}
	w, err := watchdir.Watch(
		dir,
		watchdir.Options{
			Debounce: l.opt.Debounce, Quiet: l.opt.Quiet, Notify: l.opt.Notify, Poll: l.opt.Poll,
			What: "the branches directory",
		},
	)
	if err != nil {
		return
	}
	if w.Mode() != "" {
		w.Close()
		return
	}
	l.bw = w
}

// worktreeSlots is how many probe passes share the worktrees: each pass looks at one
// share, so that each worktree is looked at once per period.
func (l *Model) worktreeSlots() uint64 {
	every := l.opt.WorktreeEvery
	if every <= 0 { // the default: slow while the branches directory's events are heard
		every = 12 * l.opt.ProbeEvery
		if l.bw != nil && l.bw.Mode() == "" {
			every = watchedWorktreeEvery
		}
	}
	return uint64(max(1, every/l.opt.ProbeEvery))
}

// branchEntry is the entry of the branches directory a worktree path lies under, as
// written (false when the path is not plainly under it: such a path is re-probed on
// every event of the directory).
func (l *Model) branchEntry(path string) (string, bool) {
	r := l.probe.Roots
	if r.Repo == "" {
		return "", false
	}
	for _, root := range []string{r.Branches, filepath.Join(r.Repo, "branches")} {
		if rest, ok := strings.CutPrefix(path, root+"/"); ok {
			first, _, _ := strings.Cut(rest, "/")
			if first != "" && first != "." && first != ".." {
				return first, true
			}
		}
	}
	return "", false
}

// reprobeWorktrees re-probes, after an event on the branches directory, the worktrees
// under the entries it names (every one on a resync): a worktree removed or created shows
// at once, not at its turn of the periodic pass. Only the records whose observation
// changed touch their items.
func (l *Model) reprobeWorktrees(c watchdir.Change) {
	names := make(map[string]bool, len(c.Names))
	for _, n := range c.Names {
		names[n] = true
	}
	touched := func(path string) bool {
		if c.Resync {
			return true
		}
		first, ok := l.branchEntry(path)
		return !ok || names[first]
	}
	e, p := l.e, l.probe.memo()
	for name, lo := range e.Locks() {
		if lo.Entry.Unreadable != nil || lo.WorkStatic {
			continue
		}
		path := lockWorktree(&lo.Entry.Record)
		if !touched(path) || !p.worktreeMoved(path, lo.Host, lo.Worktree) {
			continue
		}
		n := p.ObserveLock(lo.Entry, lo.ReadAt)
		if n.Owner != lo.Owner || n.Worktree != lo.Worktree {
			e.SetLock(name, &n)
		}
	}
	for id, lo := range e.Leases() {
		host := l.probe.rowHost(lo.Lease.OwnerHost)
		if lo.Lease.Status.Terminal() || host != l.probe.Host || !touched(lo.Lease.WorktreePath) ||
			!p.worktreeMoved(lo.Lease.WorktreePath, host, lo.Worktree) {
			continue
		}
		n := p.ObserveLease(lo.Lease)
		if n.Owner != lo.Owner || n.Worktree != lo.Worktree {
			e.SetLease(id, &n)
		}
	}
}
