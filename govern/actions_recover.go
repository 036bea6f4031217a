package govern

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"steward/govern/actionid"
	"steward/leases"
	"steward/leases/leaserec"
	"steward/locks/lockrec"
)

// kindStep is the audit record of one step of a plan (item.recover): the step's action,
// target and result, under the plan's attempt. It is not terminal: the attempt still ends
// with exactly one outcome.
const kindStep RecordKind = "step"

// DispositionPartial says some steps of a plan took effect and a later one did not: the
// outcome's effects list what was done, its message the step that stopped and why.
const DispositionPartial Disposition = "partial"

// codeNothingToRecover refuses a recover of an item with no lease and no lock to recover.
const codeNothingToRecover = "nothing_to_recover"

// recoverStep is one step of a recover plan: a governed action, its target, and its own
// plan (with the fence Apply re-checks).
type recoverStep struct {
	req  Request
	plan *plan
}

// stepFence is what a recover plan's fence holds of one step: its request and the fence of
// its own plan (for a retire, the lock's own fields: the backing leases are the ones the
// plan's earlier steps end).
type stepFence struct {
	Action string
	Target Target
	Fence  any
}

// retireFence is a retire's fence without what the plan's own lease steps change.
type retireFence struct {
	Generation    int64
	TaskSessionID string
	Inode         uint64
	Size          int64
	Owner         leaserec.ProcessState
	Expiration    lockrec.ExpirationState
	Expired       bool
}

func fenceOfStep(s recoverStep) any {
	if st, ok := s.plan.state.(*retireState); ok && st != nil {
		return retireFence{st.Generation, st.TaskSessionID, st.Inode, st.Size, st.Owner, st.Expiration, st.Expired}
	}
	return s.plan.state
}

// recoverFence is the plan's fence: its steps, in order, each with its own fence.
type recoverFence struct {
	Steps []stepFence
}

// recoverPlan is the plan Apply runs: the fence and each step's own plan.
type recoverPlan struct {
	recoverFence
	steps []recoverStep
}

// recoverItem (item.recover) recovers an item a dead or stalled claim left behind, in one plan: every
// non-terminal lease of the item is reclaimed (expired) or abandoned (stale, with proof),
// then every live lock file of the item is retired — one preview listing every step, one
// confirmation, one audit attempt whose steps are each recorded (a dead worker's claim is
// put right in one step, not two the operator must remember).
type recoverItem struct{}

func (recoverItem) spec() Spec {
	return Spec{
		ID:      actionid.Recover,
		Title:   "Recover an item: end its dead or stale lease and retire its lock, in one plan",
		MinRole: RoleOperator,
		Tier:    TierDestructive,
	}
}

func (recoverItem) plan(ctx context.Context, c *Core, req Request) (*plan, error) {
	it := req.Target.Item
	if it == nil || it.Org == "" || it.Repo == "" || it.Number <= 0 {
		return &plan{refusal: refuse(CodeInvalidRequest, "name the item to recover as ORG/REPO#N (--item)")}, nil
	}
	if r, err := c.schemaRefusal(ctx, leases.OpReclaim); err != nil || r != nil {
		return &plan{refusal: r}, err
	}
	rd, err := c.reader()
	if err != nil {
		return &plan{}, err
	}
	ls, err := rd.LeasesForWorkItem(ctx, workRef(*it))
	if err != nil {
		c.dropHandles()
		return &plan{}, err
	}
	sort.Slice(ls, func(i, j int) bool { return ls[i].LeaseID < ls[j].LeaseID })
	files, err := c.itemLocks(ctx, *it)
	if err != nil {
		return &plan{}, err
	}
	st := &recoverPlan{}
	p := &plan{extra: st, confirm: "recover " + it.String()}
	var refusals []string
	ending := map[string]bool{}
	for _, l := range ls {
		s, why, err := c.leaseStep(ctx, l.LeaseID)
		if err != nil {
			return p, err
		}
		if why != "" {
			refusals = append(refusals, why)
			continue
		}
		ending[l.LeaseID] = true
		st.steps = append(st.steps, s)
	}
	for _, name := range files {
		req := Request{Action: actionid.RetireLock, Target: Target{LockFile: name}}
		sp, err := c.retirePlan(ctx, req, ending)
		if err != nil {
			return p, err
		}
		if r := c.stepPlanRefusal(req, sp); r != nil {
			refusals = append(refusals, "lock "+name+": retire refused "+r.Code+": "+r.Message)
			continue
		}
		st.steps = append(st.steps, recoverStep{req: req, plan: sp})
	}
	for i, s := range st.steps {
		st.Steps = append(st.Steps, stepFence{Action: s.req.Action, Target: s.req.Target, Fence: fenceOfStep(s)})
		p.steps = append(p.steps, s.req)
		n := fmt.Sprintf("step %d of %d, %s on %s:", i+1, len(st.steps), s.req.Action, targetText(s.req.Target))
		p.effects = append(p.effects, n+"\n- "+strings.Join(stepEffects(s.plan.effects), "\n- "))
		for _, f := range s.plan.fences {
			p.fences = append(p.fences, fmt.Sprintf("step %d: %s", i+1, f))
		}
		for _, e := range s.plan.evidence {
			p.evidence = append(p.evidence, fmt.Sprintf("step %d: %s", i+1, e))
		}
	}
	p.state = st.recoverFence
	switch {
	case len(refusals) > 0:
		p.refusal = refuse(
			"step_refused",
			"the plan cannot run whole, so none of it runs: "+strings.Join(
				refusals,
				"; ",
			)+". Nothing was changed; deal with that step on its own first (its row in Claims or Orphans says why).",
		)
	case len(st.steps) == 0:
		p.refusal = refuse(
			codeNothingToRecover,
			fmt.Sprintf(
				"%s has no active lease and no live lock file; nothing to recover. Refresh: it may have been recovered or "+
					"released meanwhile.",
				it,
			),
		)
	default:
		p.effects = append(
			p.effects,
			"after the plan: no active lease and no live lock file of "+it.String()+" remain; the item returns to the pool "+
				"and steward assigns it to no one",
			"each step is recorded in the audit log under this one attempt; if a step is refused or fails, the steps after "+
				"it do not run and the outcome says exactly which ran",
		)
	}
	return p, nil
}

// leaseStep plans the recovery of one non-terminal lease: a reclaim when it expired, else an
// abandon with proof when it is stale; why says why neither applies.
func (c *Core) leaseStep(ctx context.Context, id string) (recoverStep, string, error) {
	reclaim := Request{Action: actionid.ReclaimExpired, Target: Target{LeaseID: id}}
	rp, err := reclaimExpired{}.plan(ctx, c, reclaim)
	if err != nil {
		return recoverStep{}, "", err
	}
	r1 := c.stepPlanRefusal(reclaim, rp)
	if r1 == nil {
		return recoverStep{req: reclaim, plan: rp}, "", nil
	}
	abandon := Request{Action: actionid.AbandonStale, Target: Target{LeaseID: id}}
	ap, err := abandonStale{}.plan(ctx, c, abandon)
	if err != nil {
		return recoverStep{}, "", err
	}
	r2 := c.stepPlanRefusal(abandon, ap)
	if r2 == nil {
		return recoverStep{req: abandon, plan: ap}, "", nil
	}
	return recoverStep{}, fmt.Sprintf(
		"lease %s: reclaim refused %s (%s); abandon refused %s (%s)",
		id,
		r1.Code,
		r1.Message,
		r2.Code,
		r2.Message,
	), nil
}

// stepPlanRefusal is a step's refusal as the plan weighs it: the step's own guards, and its
// role when it needs more than recover itself. Read-only and a role too low for recover are
// the plan's own refusal (Preview's gate), so a viewer's preview still shows every step it
// would take and why it may not — as a single action's preview does.
func (c *Core) stepPlanRefusal(req Request, p *plan) *Refusal {
	if s := c.actions[req.Action].spec(); s.MinRole > (recoverItem{}).spec().MinRole {
		if r := c.gate(s, req); r != nil {
			return r
		}
	}
	return p.refusal
}

// stepRefusal is a step's refusal: the shared guards of its action (role, read-only), then
// its own.
func (c *Core) stepRefusal(req Request, p *plan) *Refusal {
	if r := c.gate(c.actions[req.Action].spec(), req); r != nil {
		return r
	}
	return p.refusal
}

// itemLocks lists the live lock files of an item in the lock directory: the readable ones
// whose record names the item, and those whose file name does when their record cannot say
// (unreadable, or naming no item). It asks the core's lock index, which decodes only the
// files that changed since it last looked: a preview of every orphan of a large fleet
// (Annotate) decoded the whole directory once per orphan before — steward status at 50,000
// claims ran for minutes.
func (c *Core) itemLocks(ctx context.Context, it Item) ([]string, error) {
	var es []lockrec.Entry
	if v, ok := ctx.Value(lockViewKey{}).(LockView); ok {
		es = v.Lookup(lockKey(workRef(it)))
	} else {
		var err error
		if es, err = c.lockIndex().Lookup(lockKey(workRef(it))); err != nil {
			return nil, err
		}
	}
	out := make([]string, 0, len(es))
	for _, e := range es {
		out = append(out, e.Name)
	}
	return out, nil
}

func targetText(t Target) string {
	switch {
	case t.LeaseID != "":
		return "lease " + t.LeaseID
	case t.LockFile != "":
		return "lock " + t.LockFile
	case t.Item != nil:
		return t.Item.String()
	}
	return "?"
}

// apply runs the steps in order. The first step runs on the plan Apply re-read; each later
// one is planned again after the steps before it (they changed the state it reads) and
// refused unless its own fence is still the one previewed. Each step leaves a step record.
func (recoverItem) apply(ctx context.Context, c *Core, req Request, p *plan, attempt string) effect {
	st := p.extra.(*recoverPlan)
	var done []string
	for i, s := range st.steps {
		a := c.actions[s.req.Action]
		sp := s.plan
		if i > 0 {
			var err error
			sp, err = c.replanStep(ctx, s.req, st)
			if err != nil {
				return stopped(i, st, done, nil, fmt.Errorf("re-reading the state: %w", err), false)
			}
			if r := c.stepRefusal(s.req, sp); r != nil {
				c.recordStep(attempt, s.req, ResultRefused, r, nil)
				return stopped(i, st, done, r, nil, false)
			}
			if !sameFence(st.Steps[i].Fence, fenceOfStep(recoverStep{req: s.req, plan: sp})) {
				r := refuse(
					CodeFenceMoved,
					"its target changed since the preview ("+fenceDiff(
						st.Steps[i].Fence,
						fenceOfStep(recoverStep{req: s.req, plan: sp}),
					)+")",
				)
				c.recordStep(attempt, s.req, ResultRefused, r, nil)
				return stopped(i, st, done, r, nil, false)
			}
		}
		c.doStep(fmt.Sprintf("recover-step-%d", i+1))
		eff := a.apply(ctx, c, s.req, sp, attempt)
		switch {
		case eff.refusal != nil:
			c.recordStep(attempt, s.req, ResultRefused, eff.refusal, nil)
			return stopped(i, st, done, eff.refusal, nil, false)
		case eff.err != nil && eff.sent:
			c.recordStep(attempt, s.req, ResultUnknown, nil, nil)
			return stopped(i, st, done, nil, eff.err, true)
		case eff.err != nil:
			c.recordStep(attempt, s.req, ResultFailed, nil, nil)
			return stopped(i, st, done, nil, eff.err, false)
		}
		c.recordStep(attempt, s.req, ResultSucceeded, nil, eff.effects)
		done = append(
			done,
			fmt.Sprintf(
				"step %d (%s on %s): %s",
				i+1,
				s.req.Action,
				targetText(s.req.Target),
				strings.Join(stepEffects(eff.effects), "; "),
			),
		)
	}
	return effect{effects: done}
}

// replanStep plans a later step again, on the state the earlier steps left.
func (c *Core) replanStep(ctx context.Context, req Request, st *recoverPlan) (*plan, error) {
	if req.Action == actionid.RetireLock {
		return c.retirePlan(ctx, req, nil)
	}
	return c.actions[req.Action].plan(ctx, c, req)
}

// stopped is the effect of a plan that stopped at step i: nothing done yet is the step's
// own refusal or failure; after a step took effect it is a partial failure whose effects
// list exactly what was done; a lost answer is unknown.
func stopped(i int, st *recoverPlan, done []string, r *Refusal, err error, sent bool) effect {
	s := st.steps[i]
	why := ""
	if r != nil {
		why = "refused " + r.Code + ": " + r.Message
	} else {
		why = err.Error()
	}
	msg := fmt.Sprintf("step %d of %d (%s on %s) %s", i+1, len(st.steps), s.req.Action, targetText(s.req.Target), why)
	if rest := len(st.steps) - i - 1; rest > 0 {
		msg += fmt.Sprintf("; the %d step(s) after it did not run", rest)
	}
	switch {
	case sent:
		return effect{sent: true, err: errors.New(msg + "; steps done before it: " + doneText(done))}
	case len(done) == 0 && r != nil:
		return effect{refusal: refuse(r.Code, msg)}
	case len(done) == 0:
		return effect{err: errors.New(msg)}
	}
	return effect{
		partial: true,
		err:     errors.New(msg + ". Done before it: " + doneText(done) + ". Preview again to recover the rest."),
		effects: done,
	}
}

// stepEffects drops what a lease step says remains of the item's lock files: the plan's
// own later step retires them.
func stepEffects(effects []string) []string {
	out := make([]string, 0, len(effects))
	for _, e := range effects {
		switch {
		case strings.HasPrefix(e, "remains: lock file "):
		case e == retireUndoEffect:
			// A retire alone records its restore as its inverse; a recover records none (the
			// lease it ends cannot be restarted), so undo would answer no_inverse.
			out = append(
				out,
				"the archive stays in retired/; item.recover records no inverse, so `steward undo` cannot restore it (a worker "+
					"claims the item again)",
			)
		default:
			out = append(out, e)
		}
	}
	return out
}

func doneText(done []string) string {
	if len(done) == 0 {
		return "none"
	}
	return strings.Join(done, "; ")
}

// recordStep writes a step record under the plan's attempt (fsync'd like every record), so
// the log says which steps ran even if the process dies before the outcome.
func (c *Core) recordStep(attempt string, req Request, res Result, r *Refusal, effects []string) {
	rec := Record{
		At:      stamp(c.now()),
		Attempt: attempt,
		Kind:    kindStep,
		Action:  req.Action,
		Target:  req.Target,
		Actor:   c.actor,
		Result:  res,
		Effects: effects,
	}
	if r != nil {
		rec.Code, rec.Message = r.Code, r.Message
	}
	_ = c.audit.Append(rec)
}

// verify settles an unknown recover step by step, from each step's own evidence: every
// step done is succeeded, none done is failed; some done and some not is left to a person
// (the evidence says which ran).
func (recoverItem) verify(ctx context.Context, c *Core, intent Record) (Result, []string, bool) {
	if len(intent.Steps) == 0 {
		return "", []string{"the intent names no steps"}, false
	}
	var ev []string
	done, notDone := 0, 0
	for i, s := range intent.Steps {
		a, ok := c.actions[s.Action]
		if !ok {
			return "", []string{"step " + s.Action + " is not an action this core knows"}, false
		}
		sub := intent
		sub.Action, sub.Target, sub.Steps = s.Action, s.Target, nil
		res, why, settled := a.verify(ctx, c, sub)
		if !settled {
			return "", append(
				ev,
				fmt.Sprintf("step %d (%s on %s) cannot be told: %s", i+1, s.Action, targetText(s.Target), strings.Join(why, "; ")),
			), false
		}
		ev = append(
			ev,
			fmt.Sprintf("step %d (%s on %s): %s — %s", i+1, s.Action, targetText(s.Target), res, strings.Join(why, "; ")),
		)
		if res == ResultSucceeded {
			done++
		} else {
			notDone++
		}
	}
	switch {
	case notDone == 0:
		return ResultSucceeded, ev, true
	case done == 0:
		return ResultFailed, ev, true
	}
	return "", append(
		ev,
		"some steps took effect and some did not: resolve by hand (audit resolve), then recover the rest",
	), false
}
