package sim

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"steward/alloc"
	"steward/sim/foreign"
)

// legacyWorker runs the supervised system's older lock tool instead of steward's core (see
// package foreign): it reads the backlog from Gitea, goes for the most valuable open item
// that carries no block or clarification label, checks only for its own lock file — not
// steward's, not the DB — and writes its legacy lock in place. It never heartbeats (a legacy
// lock has no expiry); it removes its file when it finishes, and its start-up removes a lock
// its dead predecessor left (the old tool's recovery of its own lock). Now and then it is
// killed mid-claim, and sometimes in the middle of writing its lock (a torn file).
//
// What steward sees is real: beside a lock the core wrote for the same item, a
// duplicate-live-lock (and every steward claim of that item refused while it stands); the
// file itself a legacy-lock and a lock-never-expires (retire offered once its owner is dead);
// a torn one an unreadable-lock.
type legacyWorker struct {
	f    *Fleet
	name string
	rng  *rand.Rand
	gen  int
	proc Proc
	// own is the lock file of the current claim ("" when none); left is one a dead
	// predecessor left behind.
	own, left string
	worktree  string
	claim     int64
}

func (f *Fleet) newLegacy(i int) *legacyWorker {
	return &legacyWorker{f: f, name: fmt.Sprintf("legacy-worker-%d", i+1), rng: workerRand(f.cfg.Seed, 1000+i)}
}

func (w *legacyWorker) emit(kind EventKind, item int64, detail string) {
	w.f.emit(Event{Worker: w.name, Kind: kind, Item: item, Detail: detail})
}

func (w *legacyWorker) between(lo, hi time.Duration) time.Duration {
	return lo + time.Duration(w.rng.Int64N(int64(hi-lo)))
}

func (w *legacyWorker) boot() {
	p, err := w.f.startProc()
	if err != nil {
		w.emit(EventError, 0, err.Error())
		w.f.sched.after(time.Minute, w.boot)
		return
	}
	w.proc = p
	w.gen++
	if w.gen > 1 {
		w.emit(eventRestart, 0, "pid "+strconv.Itoa(p.PID()))
	}
	if w.left != "" {
		// The old tool's start-up recovers its own lock: a file it left when it died (the
		// on-call may have retired it already).
		if err := foreign.Remove(w.f.cfg.Workspace.LocksDir, w.left); err != nil {
			w.emit(EventError, 0, "legacy recovery: "+err.Error())
		}
		removeWorktree(w.worktree)
		w.left = ""
	}
	w.cycle()
}

func (w *legacyWorker) cycle() {
	cands, err := w.f.inspect(w.f.ctx())
	if err != nil {
		w.emit(EventError, 0, "inspect: "+err.Error())
		w.f.sched.after(w.between(time.Minute, 3*time.Minute), w.cycle)
		return
	}
	// The old tool's choice: the most valuable open item without a block or clarification
	// label whose file of its own does not exist — claims by anyone else are not looked at.
	var pick candidate
	best := -1
	open, deps := alloc.Index(cands)
	for _, c := range cands {
		mine := c
		mine.Claimed, mine.HeldBy = false, ""
		if ok, _ := alloc.Eligible(mine, w.f.rules, open); !ok {
			continue
		}
		name := foreign.Name(w.f.cfg.Owner, w.f.cfg.Repo, c.Number)
		if ok, err := foreign.Exists(w.f.cfg.Workspace.LocksDir, name); err != nil || ok {
			continue
		}
		if v := alloc.Value(c, deps)*4 + w.rng.IntN(12); v > best {
			pick, best = c, v
		}
	}
	if best < 0 {
		w.emit(eventIdle, 0, "nothing the legacy tool would take")
		w.f.sched.after(w.between(2*time.Minute, 4*time.Minute), w.cycle)
		return
	}
	name := foreign.Name(w.f.cfg.Owner, w.f.cfg.Repo, pick.Number)
	branch := fmt.Sprintf("fix/issue-%d-legacy", pick.Number)
	wt := w.f.worktreeOf(pick.Number) + "-legacy"
	l := foreign.Lock{
		Remote:   w.f.cfg.Remote,
		Org:      w.f.cfg.Owner,
		Repo:     w.f.cfg.Repo,
		Issue:    pick.Number,
		Branch:   branch,
		Worktree: wt,
		Username: w.name,
		Profile:  "author",
		PID:      w.proc.PID(),
	}
	if w.rng.Float64() < 0.1 {
		// Killed in the middle of its in-place write: half a file, and no process.
		if err := foreign.WriteTorn(w.f.cfg.Workspace.LocksDir, name, l); err != nil {
			w.emit(EventError, pick.Number, "legacy write: "+err.Error())
		}
		w.left, w.worktree = name, ""
		w.die(pick.Number, "killed while writing its lock (torn file)")
		return
	}
	w.worktree = wt
	if err := makeWorktree(wt); err != nil {
		w.emit(EventError, pick.Number, "worktree: "+err.Error())
	}
	if err := foreign.Write(w.f.cfg.Workspace.LocksDir, name, l); err != nil {
		w.emit(EventError, pick.Number, "legacy write: "+err.Error())
		w.f.sched.after(w.between(time.Minute, 2*time.Minute), w.cycle)
		return
	}
	w.own, w.claim = name, pick.Number
	detail := name
	if pick.HeldBy != "" || pick.Claimed {
		detail += " (the item was claimed already: the old tool checks only its own file)"
	}
	w.emit(eventLegacyClaim, pick.Number, detail)
	dur := w.between(10*time.Minute, 40*time.Minute)
	own := name
	if w.rng.Float64() < 0.3 {
		w.f.sched.after(dur/2, func() {
			if w.own == own {
				w.left, w.own = own, ""
				w.die(w.claim, "killed mid-claim; its legacy lock stays")
			}
		})
		return
	}
	w.f.sched.after(dur, func() {
		if w.own != own {
			return
		}
		if err := foreign.Remove(w.f.cfg.Workspace.LocksDir, own); err != nil {
			w.emit(EventError, w.claim, "legacy release: "+err.Error())
		} else {
			w.emit(eventLegacyRelease, w.claim, own)
		}
		removeWorktree(w.worktree)
		w.own = ""
		w.f.sched.after(w.between(time.Minute, 3*time.Minute), w.cycle)
	})
}

func (w *legacyWorker) die(item int64, why string) {
	pid := w.proc.PID()
	_ = w.proc.Kill()
	w.emit(eventDeath, item, fmt.Sprintf("%s (pid %d)", why, pid))
	w.f.sched.after(w.between(time.Minute, 3*time.Minute), w.boot)
}
