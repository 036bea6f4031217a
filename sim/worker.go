package sim

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"steward/govern"
	"steward/govern/actionid"
	"steward/leases/leaserec"
)

// fate is what will become of one claim.
type fate string

// The fates a claim can meet.
const (
	fateNormal fate = "normal" // work, heartbeat, release
	fateDie    fate = "die"    // the process is killed mid-claim; lock and lease stay
	fateStall  fate = "stall"  // heartbeats stop while the process lives on
	fateAsk    fate = "ask"    // ask for clarification (which releases the claim)
	fateVanish fate = "vanish" // the worktree disappears; later the process dies
)

// worker is one simulated worker. All of its methods run on the scheduler goroutine.
type worker struct {
	f       *Fleet
	idx     int
	name    string
	rng     *rand.Rand
	core    *govern.Core
	hands   Hands
	gen     int
	session string
	proc    Proc
	claim   *claim
	// bag holds the fates of the worker's next claims (drawFate).
	bag []fate
}

// claim is a worker's current claim.
type claim struct {
	item     candidate
	lease    string
	worktree string
	fate     fate
	stalled  bool
	// pr is the pull request the worker opened for the claim (0: none).
	pr int64
	// fence is what the worker holds: the claim's, then each heartbeat's, with the claim
	// token when there is one.
	fence govern.OwnLeaseParams
}

// fenceOf takes the fence values of a claim or heartbeat outcome, with the claim token
// when the claim went through steward mcp (which binds every claim to one).
func fenceOf(d map[string]string) govern.OwnLeaseParams {
	return govern.OwnLeaseParams{
		HeldFence: govern.HeldFence{ExpiresAt: d["expires_at"], LockGeneration: d["lock_generation"],
			TaskSession: d["task_session_id"], LeaseGeneration: d["lease_generation"]},
		OwnerProof: govern.OwnerProof{ClaimToken: d[govern.DetailClaimToken]},
	}
}

func (f *Fleet) newWorker(i int) *worker {
	name := fmt.Sprintf("sim-worker-%d", i+1)
	actor := govern.LocalActor(govern.RoleOperator, name)
	core := govern.New(
		f.cfg.Workspace,
		f.cfg.Audit,
		govern.Options{Actor: actor, Now: func() time.Time { return f.sched.clock() }},
	)
	return &worker{f: f, idx: i, name: name, rng: workerRand(f.cfg.Seed, i), core: core}
}

func (w *worker) ctx() context.Context { return w.f.ctx() }

// between returns a duration uniformly in [lo, hi) from the worker's source.
func (w *worker) between(lo, hi time.Duration) time.Duration {
	return lo + time.Duration(w.rng.Int64N(int64(hi-lo)))
}

func (w *worker) emit(kind EventKind, item int64, detail string) {
	w.f.emit(Event{Worker: w.name, Session: w.session, Kind: kind, Item: item, Detail: detail})
}

// boot starts a fresh process and session, then the cycle.
func (w *worker) boot() {
	p, err := w.f.startProc()
	if err != nil {
		w.emit(EventError, 0, err.Error())
		w.f.sched.after(time.Minute, w.boot)
		return
	}
	w.proc = p
	w.gen++
	w.session = fmt.Sprintf("%s-s%d", w.name, w.gen)
	if w.f.cfg.Hands == nil {
		w.hands = coreHands{w.core}
	} else if w.hands, err = w.f.cfg.Hands(w.ctx(), w.name, w.session, p.PID()); err != nil {
		w.emit(EventError, 0, "connect: "+err.Error())
		_ = p.Kill()
		w.hands = nil
		w.f.sched.after(time.Minute, w.boot)
		return
	}
	if w.gen > 1 {
		w.emit(eventRestart, 0, "pid "+strconv.Itoa(p.PID()))
	}
	w.cycle()
}

// act performs a worker request through the worker's hands.
func (w *worker) act(req govern.Request) (govern.Outcome, error) {
	if w.hands == nil {
		return govern.Outcome{}, fmt.Errorf("%s has no connection", w.name)
	}
	return w.hands.Act(w.ctx(), req)
}

// dropHands closes the worker's connection (its process died, or the run ended).
func (w *worker) dropHands() {
	if w.hands != nil {
		_ = w.hands.Close()
		w.hands = nil
	}
}

// cycle inspects, chooses and claims.
func (w *worker) cycle() {
	cands, err := w.f.inspect(w.ctx())
	if err != nil {
		w.emit(EventError, 0, "inspect: "+err.Error())
		w.f.sched.after(w.between(30*time.Second, 90*time.Second), w.cycle)
		return
	}
	contend := w.rng.Float64() < w.f.rates.Contend
	pick, ok := choose(cands, w.f.rules, w.rng)
	if contend {
		if hot, found := Hot(cands, w.session); found {
			w.tryClaim(hot)
		}
	}
	if !ok {
		w.emit(eventIdle, 0, "nothing eligible")
		w.f.sched.after(w.between(time.Minute, 2*time.Minute), w.cycle)
		return
	}
	if !w.tryClaim(pick) {
		w.f.sched.after(w.between(20*time.Second, 60*time.Second), w.cycle)
		return
	}
	w.work()
}

// tryClaim claims c through the governed core; a refusal is an ordinary outcome.
func (w *worker) tryClaim(c candidate) bool {
	wt := w.f.worktreeOf(c.Number)
	req := govern.Request{
		Action: actionid.Claim,
		Target: govern.Target{
			Session: w.session,
			Item: &govern.Item{
				Remote: w.f.cfg.Remote,
				Org:    w.f.cfg.Owner,
				Repo:   w.f.cfg.Repo,
				Kind:   "issue",
				Number: c.Number,
			},
		},
		Params: govern.ClaimParams{Role: "author", Profile: "sim", PID: strconv.Itoa(w.proc.PID()),
			Username: w.name, Title: c.Title, Branch: fmt.Sprintf("feat/issue-%d", c.Number), Worktree: wt},
	}
	out, err := w.act(req)
	switch {
	case err != nil:
		w.emit(EventError, c.Number, "claim: "+err.Error())
		return false
	case out.Result == govern.ResultSucceeded:
		if err := makeWorktree(wt); err != nil {
			w.emit(EventError, c.Number, "worktree: "+err.Error())
		}
		w.claim = &claim{item: c, lease: out.Detail["lease_id"], worktree: wt, fence: fenceOf(out.Detail)}
		w.emit(eventClaim, c.Number, out.Detail["lease_id"])
		return true
	}
	w.emit(eventRefused, c.Number, out.Code)
	return false
}

// work draws the claim's fate and schedules its heartbeats and its end.
func (w *worker) work() {
	c := w.claim
	r := w.f.rates
	dur := w.between(3*time.Minute, 12*time.Minute)
	point := time.Duration(float64(dur) * (0.15 + 0.5*w.rng.Float64()))
	pr := w.rng.Float64() < r.PR
	c.fate = w.drawFate()
	w.f.sched.after(w.cadence(), func() { w.heartbeat(c) })
	if pr && w.f.cfg.PRs != nil {
		w.f.sched.after(point/2, func() { w.openPR(c) })
	}
	switch c.fate {
	case fateNormal:
		w.f.sched.after(dur, func() { w.release(c) })
	case fateDie:
		w.f.sched.after(point, func() { w.die(c, "killed mid-claim") })
	case fateStall:
		w.f.sched.after(point, func() { w.stall(c) })
	case fateAsk:
		w.f.sched.after(point, func() { w.ask(c) })
	case fateVanish:
		// Without its worktree the worker crashes within minutes (its next git command
		// fails), not at the end of the work it can no longer do.
		w.f.sched.after(point, func() { w.vanish(c, min(dur-point, w.between(2*time.Minute, 5*time.Minute))) })
	}
}

// bagSize is how many claims one bag of fates covers.
const bagSize = 25

// drawFate takes the next fate from the worker's bag: bagSize fates in the proportions of the
// rates, shuffled, refilled when empty. Over any bagSize claims of a worker the mix is
// exact, so a demo shows every behaviour steadily instead of only on average (a run of
// luck no longer leaves a minute without a question, or a fleet of dead claims).
func (w *worker) drawFate() fate {
	if len(w.bag) == 0 {
		r := w.f.rates
		n := func(p float64) int { return int(p*bagSize + 0.5) }
		for _, x := range []struct {
			f fate
			n int
		}{{fateDie, n(r.Die)}, {fateStall, n(r.Stall)}, {fateAsk, n(r.Ask)}, {fateVanish, n(r.Vanish)}} {
			for range x.n {
				w.bag = append(w.bag, x.f)
			}
		}
		for len(w.bag) < bagSize {
			w.bag = append(w.bag, fateNormal)
		}
		w.rng.Shuffle(len(w.bag), func(i, j int) { w.bag[i], w.bag[j] = w.bag[j], w.bag[i] })
	}
	f := w.bag[0]
	w.bag = w.bag[1:]
	return f
}

// cadence is the author policy's heartbeat cadence, in supervised time.
func (w *worker) cadence() time.Duration {
	return leaserec.DefaultPolicy(leaserec.ClassAuthorIssueWork).HeartbeatCadence()
}

func (w *worker) current(c *claim) bool { return w.claim == c }

func (w *worker) heartbeat(c *claim) {
	if !w.current(c) || c.stalled {
		return
	}
	out, err := w.act(w.own(actionid.Heartbeat, c))
	if err != nil || out.Result != govern.ResultSucceeded {
		w.emit(EventError, c.item.Number, "heartbeat refused: "+msg(out, err)+"; giving the claim up")
		w.claim = nil
		w.f.sched.after(w.between(20*time.Second, 60*time.Second), w.cycle)
		return
	}
	c.fence = fenceOf(out.Detail)
	w.emit(EventHeartbeat, c.item.Number, "")
	w.f.sched.after(w.cadence(), func() { w.heartbeat(c) })
}

// own is a request on the worker's own claim (a heartbeat or a release), fenced on the values
// it holds.
func (w *worker) own(action string, c *claim) govern.Request {
	return govern.Request{Action: action, Target: govern.Target{LeaseID: c.lease, Session: w.session}, Params: c.fence}
}

func (w *worker) release(c *claim) {
	if !w.current(c) {
		return
	}
	w.claim = nil
	out, err := w.act(w.own(actionid.Release, c))
	if err != nil || out.Result != govern.ResultSucceeded {
		w.emit(EventError, c.item.Number, "release: "+msg(out, err))
	} else {
		w.emit(eventRelease, c.item.Number, c.lease)
		if c.fate == fateNormal {
			w.f.finished(c.item.Number, c.pr)
		}
	}
	removeWorktree(c.worktree)
	w.f.sched.after(w.between(20*time.Second, time.Minute), w.cycle)
}

// die kills the worker's process and stops it: the lock and the lease stay behind.
func (w *worker) die(c *claim, why string) {
	if !w.current(c) {
		return
	}
	w.claim = nil
	pid := w.proc.PID()
	_ = w.proc.Kill()
	w.dropHands()
	w.emit(eventDeath, c.item.Number, fmt.Sprintf("%s (pid %d)", why, pid))
	// Its supervisor restarts it within a minute or so.
	w.f.sched.after(w.between(30*time.Second, 90*time.Second), w.boot)
}

// stall stops heartbeats while the process lives on; later the worker gives up.
func (w *worker) stall(c *claim) {
	if !w.current(c) {
		return
	}
	c.stalled = true
	w.emit(eventStall, c.item.Number, "heartbeats stop; pid "+strconv.Itoa(w.proc.PID())+" lives on")
	// Its harness times it out 11-17 minutes later: past the lease's expiry (10 minutes
	// after the last heartbeat), so an expired claim of a live owner shows for a while,
	// but not for so long that stalled workers crowd out the live ones.
	w.f.sched.after(w.between(11*time.Minute, 17*time.Minute), func() { w.die(c, "gave up after stalling") })
}

func (w *worker) vanish(c *claim, rest time.Duration) {
	if !w.current(c) {
		return
	}
	removeWorktree(c.worktree)
	w.emit(eventVanish, c.item.Number, c.worktree)
	w.f.sched.after(rest, func() { w.die(c, "crashed without its worktree") })
}

func (w *worker) openPR(c *claim) {
	if !w.current(c) {
		return
	}
	n, err := w.f.cfg.PRs(
		w.ctx(),
		w.name,
		fmt.Sprintf("feat/issue-%d", c.item.Number),
		fmt.Sprintf("WIP: %s (#%d)", c.item.Title, c.item.Number),
	)
	if err != nil {
		w.emit(EventError, c.item.Number, "open PR: "+err.Error())
		return
	}
	c.pr = n
	w.emit(eventPR, c.item.Number, "opened PR #"+strconv.FormatInt(n, 10))
}

var questions = []string{
	"Should **%s** keep the old behaviour behind a flag, or replace it outright?",
	"The issue for **%s** does not say which API version to target. v1 or v2?",
	"For **%s**: is it fine to change the on-disk format, or must old files keep loading?",
	"**%s** conflicts with the current config defaults. Which one wins?",
}

func (w *worker) ask(c *claim) {
	if !w.current(c) {
		return
	}
	q := fmt.Sprintf(questions[w.rng.IntN(len(questions))], c.item.Title)
	if _, ok := w.core.Spec(actionid.Ask); !ok && w.f.cfg.Hands == nil {
		w.emit(EventError, c.item.Number, "clarification.ask is not available in this core; releasing instead")
		w.release(c)
		return
	}
	w.claim = nil
	req := govern.Request{Action: actionid.Ask, Target: govern.Target{LeaseID: c.lease, Session: w.session,
		Item: &govern.Item{
			Remote: w.f.cfg.Remote,
			Org:    w.f.cfg.Owner,
			Repo:   w.f.cfg.Repo,
			Kind:   "issue",
			Number: c.item.Number,
		}},
		Params: govern.AskParams{Question: q, HeldFence: c.fence.HeldFence, OwnerProof: c.fence.OwnerProof}}
	out, err := w.act(req)
	if err != nil || out.Result != govern.ResultSucceeded {
		w.emit(EventError, c.item.Number, "ask: "+msg(out, err))
	} else {
		w.emit(EventQuestion, c.item.Number, q)
	}
	removeWorktree(c.worktree)
	w.f.sched.after(w.between(20*time.Second, time.Minute), w.cycle)
}

func msg(out govern.Outcome, err error) string {
	if err != nil {
		return err.Error()
	}
	if out.Code != "" {
		return out.Code + ": " + out.Message
	}
	return string(out.Result) + ": " + out.Message
}
