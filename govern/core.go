package govern

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sort"
	"time"

	"steward/leases"
)

// Preview is what an action would do, computed by reading only. It carries the fence
// snapshot that Apply re-checks, so an Apply is always of one particular Preview.
type Preview struct {
	Request Request  `json:"request"`
	Spec    Spec     `json:"spec"`
	Allowed bool     `json:"allowed"`
	Refusal *Refusal `json:"refusal,omitempty"`
	// Effects says, in plain words, what Apply would change.
	Effects []string `json:"effects,omitempty"`
	// Fences are the facts Apply re-checks atomically before any effect.
	Fences []string `json:"fences,omitempty"`
	// Evidence is what the guards read (lease status, liveness, expiry, …).
	Evidence []string `json:"evidence,omitempty"`
	// ConfirmPhrase, when set, must be typed back to Apply.
	ConfirmPhrase string    `json:"confirm_phrase,omitempty"`
	Inverse       *Request  `json:"inverse,omitempty"`
	At            time.Time `json:"at"`

	plan *plan
}

// Outcome is what an Apply came to. It always names its audit attempt.
type Outcome struct {
	Attempt     string      `json:"attempt"`
	Action      string      `json:"action"`
	Result      Result      `json:"result"`
	Disposition Disposition `json:"disposition"`
	Code        string      `json:"code,omitempty"`
	Message     string      `json:"message,omitempty"`
	Effects     []string    `json:"effects,omitempty"`
	// Detail carries action-specific results (the new lease id of a claim, …).
	Detail map[string]string `json:"detail,omitempty"`
}

// plan is an action's reading of the state: the guards' verdict and the fence snapshot.
type plan struct {
	refusal  *Refusal
	effects  []string
	fences   []string
	evidence []string
	confirm  string
	inverse  *Request
	// state is the action's own fence snapshot, compared by Apply.
	state any
	// recordRefusal asks Apply to run the effect even when refused, because the source
	// records the refusal itself (a refused claim leaves a claim.refused event).
	recordRefusal bool
	// steps are the requests of a plan made of other actions (item.recover), recorded in
	// its intent so that a verifier can check each; extra is action data Apply needs beyond
	// the fence (not compared).
	steps []Request
	extra any
	// already, when set, says the state asked for holds already (a worker repeating its own
	// release): Apply succeeds with this message, changes nothing and records only the
	// outcome (no intent: there is no effect to verify).
	already string
}

// effect is what an action's apply step reports.
type effect struct {
	// sent is true once anything may have reached a source; a failure after that is unknown.
	sent bool
	// compensated: the apply made part of its effect and undid it (effects say both); with
	// err it is failed with disposition compensated, never unknown.
	compensated bool
	// partial: a plan's earlier steps took effect and a later one did not (effects list
	// what was done); with err it is failed with disposition partial.
	partial bool
	refusal *Refusal
	// inverse, when set, replaces the preview's inverse (it names what the apply made).
	inverse *Request
	err     error
	effects []string
	detail  map[string]string
}

// action is the internal shape of every governed action.
type action interface {
	spec() Spec
	// plan reads the state and runs every guard. It must never write.
	plan(ctx context.Context, c *Core, req Request) (*plan, error)
	// apply performs the effect, re-checking p's fences atomically. It calls c.step at its
	// internal boundaries.
	apply(ctx context.Context, c *Core, req Request, p *plan, attempt string) effect
	// verify settles an attempt whose outcome is unknown from evidence read back now. ok is
	// false when the evidence cannot tell.
	verify(ctx context.Context, c *Core, intent Record) (res Result, evidence []string, ok bool)
}

// Core is the governed core: one per workspace and actor. All of its methods are safe for
// concurrent use.
type Core struct {
	ws       Workspace
	audit    *AuditLog
	actor    Actor
	readOnly bool
	// roWhy says who made the core read-only, for the refusal.
	roWhy   string
	now     func() time.Time
	actions map[string]action
	src     *sources
	// step is called at the boundaries of an apply; crash tests kill the process there.
	step func(name string)
	// wall0 is the wall clock when the core was made and elapsed the time passed since by
	// the monotonic clock (nil: not known): a wall clock that moved ahead of it jumped
	// (clockRefusal).
	wall0   time.Time
	elapsed func() time.Duration
	// needProof demands proof of ownership for every worker action on a lease
	// (WithOwnerProof).
	needProof bool
	// entries reads the workspace's attention entries now (Options.Attention).
	entries AttentionLookup
}

// Options configure a Core.
type Options struct {
	Actor Actor
	// ReadOnly refuses every apply with read_only and records nothing: no audit record, no
	// file. ReadOnlyReason says who set it and what could lift it (config.Grant's
	// ReadOnlyReason); the refusal quotes it.
	ReadOnly       bool
	ReadOnlyReason string
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// Elapsed is the time passed since New by a clock nobody sets, which a wall clock that
	// jumped forward is told against (clockRefusal). Nil: the monotonic clock when Now is
	// nil too; with a Now of its own and no Elapsed (a test clock, a fixed instant) there is
	// nothing to tell a jump against, and none is looked for.
	Elapsed func() time.Duration
	// Step, when set, is called at each boundary of an apply (for crash tests).
	Step func(name string)
	// Attention reads the workspace's attention entries now: attention.ack and
	// attention.snooze refuse an entry that is not among them (not_found) or whose evidence
	// is no longer the one given (fence_moved). The assembly (app) always sets it; without
	// it the entry is taken as named.
	Attention AttentionLookup
}

// New returns a core acting on ws as opts.Actor, recording into audit. A nil audit makes a
// preview-only core: every Apply refuses with audit_unavailable.
func New(ws Workspace, audit *AuditLog, opts Options) *Core {
	c := &Core{
		ws:       ws,
		audit:    audit,
		actor:    opts.Actor,
		readOnly: opts.ReadOnly,
		roWhy:    opts.ReadOnlyReason,
		now:      opts.Now,
		step:     opts.Step,
		src:      &sources{},
		entries:  opts.Attention,
	}
	c.elapsed = opts.Elapsed
	if c.now == nil {
		c.now = time.Now
		if c.elapsed == nil {
			start := time.Now()
			c.elapsed = func() time.Duration { return time.Since(start) }
		}
	}
	c.wall0 = c.now().Round(0)
	c.actions = map[string]action{}
	for _, a := range registry() {
		c.actions[a.spec().ID] = a
	}
	return c
}

// Actor returns who this core acts as.
func (c *Core) Actor() Actor { return c.actor }

// ForSession returns a core acting for one worker session: this core's actor with
// Actor.Session set (so every audit record names the session), the same workspace, audit
// log, switches and source handles. It refuses a worker action on behalf of any other
// session (not_owner). Close the parent core, not the ones it returned: they share its
// handles.
func (c *Core) ForSession(session string) *Core {
	cp := *c
	cp.actor.Session = session
	return &cp
}

// ReadOnly reports whether every apply refuses with read_only.
func (c *Core) ReadOnly() bool { return c.readOnly }

// Workspace returns the workspace the core acts on.
func (c *Core) Workspace() Workspace { return c.ws }

// Actions lists the specs of every action the core knows, sorted by id.
func (c *Core) Actions() []Spec {
	out := make([]Spec, 0, len(c.actions))
	for _, a := range c.actions {
		out = append(out, a.spec())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Spec returns the spec of the action with the given id.
func (c *Core) Spec(id string) (Spec, bool) {
	a, ok := c.actions[id]
	if !ok {
		return Spec{}, false
	}
	return a.spec(), true
}

func (c *Core) doStep(name string) {
	if c.step != nil {
		c.step(name)
	}
}

// gate runs the guards every action shares: the read-only switch, the role, and for a
// core bound to a worker session (ForSession), that a worker action is that session's.
func (c *Core) gate(s Spec, req Request) *Refusal {
	if s.Worker && c.actor.Session != "" && req.Target.Session != c.actor.Session {
		return refuse(
			CodeNotOwner,
			fmt.Sprintf(
				"this steward acts for session %q, not %q; a worker acts only as its own session",
				c.actor.Session,
				req.Target.Session,
			),
		)
	}
	if c.readOnly {
		return refuse(CodeReadOnly, c.readOnlyMessage())
	}
	if c.actor.Role < s.MinRole {
		return refuse(CodeRoleTooLow, fmt.Sprintf("%s needs role %s or above; %s holds %s. Ask someone with %s to run it.",
			s.ID, s.MinRole, c.who(), c.actor.Role, s.MinRole))
	}
	return nil
}

// readOnlyMessage is the read_only refusal: what happened, who set it, what lifts it.
func (c *Core) readOnlyMessage() string {
	why := c.roWhy
	if why == "" {
		why = "restart without --read-only to act"
	}
	return "steward is read-only here (" + why + "). Nothing was changed and nothing was recorded."
}

func (c *Core) who() string {
	if c.actor.GiteaLogin != "" {
		return c.actor.GiteaLogin
	}
	return c.actor.OSUser + "@" + c.actor.Host
}

// Preview reads the state and reports what req would do. It writes nothing at all: no
// file, no row, no audit record.
func (c *Core) Preview(ctx context.Context, req Request) (Preview, error) {
	a, ok := c.actions[req.Action]
	if !ok {
		return Preview{
			Request: req,
			Refusal: refuse(
				CodeUnknownAction,
				fmt.Sprintf("steward knows no action %q. Run `steward actions` to list them.", req.Action),
			),
			At: c.now(),
		}, nil
	}
	s := a.spec()
	pv := Preview{Request: req, Spec: s, At: c.now()}
	p, err := c.plan(ctx, a, req)
	if err != nil {
		return pv, err
	}
	pv.plan = p
	pv.Effects, pv.Fences, pv.Evidence, pv.Inverse = p.effects, p.fences, p.evidence, p.inverse
	if p.already != "" {
		pv.Effects = []string{"nothing: " + p.already}
	}
	pv.ConfirmPhrase = p.confirm
	if r := c.gate(s, req); r != nil {
		pv.Refusal = r
	} else {
		pv.Refusal = p.refusal
	}
	pv.Allowed = pv.Refusal == nil
	return pv, nil
}

// plan checks the request's arguments against their limits (argLimits), then lets the
// action read the state and run its guards. An argument over its limit is refused before
// the action reads anything, so it is refused alike on every surface and nothing is written.
func (c *Core) plan(ctx context.Context, a action, req Request) (*plan, error) {
	if r := checkArgs(req); r != nil {
		return &plan{refusal: r}, nil
	}
	return a.plan(ctx, c, req)
}

// NewAttemptID returns a fresh audit attempt id.
func NewAttemptID(now time.Time) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "att-" + now.UTC().Format("20060102T150405") + "-" + hex.EncodeToString(b[:])
}

// Apply performs pv, re-checking its fences atomically. confirmation must equal the
// preview's ConfirmPhrase when one is required. Every call leaves exactly one terminal
// audit record, also on panic or cancellation; a write whose response was lost is unknown.
// A read-only core is the exception: it refuses read_only and records nothing at all (the
// refusal is returned, to be printed) — read-only means no file is created or appended to.
func (c *Core) Apply(ctx context.Context, pv Preview, confirmation string) (out Outcome) {
	req := pv.Request
	attempt := NewAttemptID(c.now())
	if c.readOnly {
		return Outcome{Attempt: attempt, Action: req.Action, Result: ResultRefused, Disposition: DispositionNotAttempted,
			Code: CodeReadOnly, Message: c.readOnlyMessage()}
	}
	if c.audit == nil {
		return Outcome{Attempt: attempt, Action: req.Action, Result: ResultRefused, Disposition: DispositionNotAttempted,
			Code: CodeAuditUnavailable, Message: "this steward has no audit log (a preview-only core), so nothing may be " +
				"applied; open one with --audit"}
	}
	out = Outcome{Attempt: attempt, Action: req.Action}
	// The record names the target as asked, but never carries an argument over its limit.
	base := Record{Attempt: attempt, Action: req.Action, Target: clipTarget(req.Target), Actor: c.actor}
	inverse := pv.Inverse
	terminal := func(res Result, disp Disposition, r *Refusal, msg string, effects []string) Outcome {
		rec := base
		rec.At, rec.Kind, rec.Result, rec.Disposition, rec.Effects = stamp(c.now()), KindOutcome, res, disp, effects
		if r != nil {
			rec.Code, rec.Message = r.Code, r.Message
		} else {
			rec.Message = Cap(msg)
		}
		rec.Fences = pv.Fences
		if res == ResultSucceeded {
			rec.Inverse = inverse
		}
		out.Result, out.Disposition, out.Code, out.Message, out.Effects = res, disp, rec.Code, rec.Message, effects
		if err := c.audit.Append(rec); err != nil && res == ResultSucceeded {
			out.Message = Cap(out.Message + " (the outcome record could not be written: " + err.Error() + ")")
		}
		return out
	}
	a, ok := c.actions[req.Action]
	if !ok || pv.plan == nil {
		return terminal(
			ResultRefused,
			DispositionNotAttempted,
			refuse(
				CodeInvalidRequest,
				"this apply has no preview from this core. Preview the action first, then apply that preview.",
			),
			"",
			nil,
		)
	}
	if r := c.gate(a.spec(), req); r != nil {
		return terminal(ResultRefused, DispositionNotAttempted, r, "", nil)
	}
	if pv.ConfirmPhrase != "" && confirmation != pv.ConfirmPhrase {
		return terminal(ResultRefused, DispositionNotAttempted, refuse(
			CodeConfirmationRequired,
			fmt.Sprintf(
				"%s is %s: type the phrase %q to confirm. Nothing was changed.",
				req.Action,
				a.spec().Tier,
				pv.ConfirmPhrase,
			),
		), "", nil)
	}
	// Re-read the state: the preview's refusal, or a changed fence, refuses now.
	now, err := c.plan(ctx, a, req)
	if err != nil {
		return terminal(
			ResultRefused,
			DispositionNotAttempted,
			refuse(
				CodeSourceUnavailable,
				"could not read the state to re-check the fences: "+err.Error()+". Nothing was changed; retry when the source "+
					"is readable.",
			),
			"",
			nil,
		)
	}
	if now.refusal != nil && !now.recordRefusal {
		return terminal(ResultRefused, DispositionNotAttempted, now.refusal, "", nil)
	}
	if now.refusal == nil && now.already != "" {
		return terminal(ResultSucceeded, DispositionNotAttempted, nil, now.already, nil)
	}
	if now.refusal == nil && !sameFence(pv.plan.state, now.state) {
		return terminal(ResultRefused, DispositionNotAttempted, refuse(
			CodeFenceMoved,
			"the state changed since the preview ("+fenceDiff(
				pv.plan.state,
				now.state,
			)+"). Nothing was changed; preview again and decide on what is there now.",
		), "", nil)
	}
	release, err := c.audit.hold(attempt)
	if err != nil {
		out.Result, out.Disposition, out.Code = ResultRefused, DispositionNotAttempted, CodeAuditUnavailable
		out.Message = Cap(
			"the audit log cannot record this attempt (" + err.Error() + "), so nothing was attempted. Free the audit log's " +
				"disk or fix its permissions, then retry.",
		)
		return out
	}
	defer release() // after the outcome is written: terminal runs in the return statements
	c.doStep("inflight-held")
	intent := base
	intent.At, intent.Kind, intent.Effects, intent.Fences, intent.Evidence, intent.Inverse = stamp(
		c.now(),
	), KindIntent, pv.Effects, pv.Fences, pv.Evidence, pv.Inverse
	intent.Steps = now.steps
	if err := c.audit.Append(intent); err != nil {
		// No intent, no effect: and no terminal record either, for the log cannot take one.
		out.Result, out.Disposition, out.Code = ResultRefused, DispositionNotAttempted, CodeAuditUnavailable
		out.Message = Cap(
			"the audit log cannot record this attempt (" + err.Error() + "), so nothing was attempted. Free the audit log's " +
				"disk or fix its permissions, then retry.",
		)
		return out
	}
	c.doStep("intent-written")
	var eff effect
	defer func() {
		if p := recover(); p != nil {
			if eff.sent {
				terminal(
					ResultUnknown,
					DispositionOutcomeUnknown,
					nil,
					fmt.Sprintf("panic during apply after the effect began: %v; it may have taken effect — verify before retrying", p),
					nil,
				)
			} else {
				terminal(ResultFailed, DispositionNotAttempted, nil, fmt.Sprintf("panic before any effect: %v", p), nil)
			}
			panic(p)
		}
	}()
	// Every DB event the apply writes names the attempt, so a verifier can find its effect.
	eff = a.apply(leases.WithAttempt(ctx, attempt), c, req, now, attempt)
	c.doStep("effect-done")
	if eff.inverse != nil {
		inverse = eff.inverse
	}
	if eff.detail != nil {
		out.Detail = eff.detail
	}
	switch {
	case eff.refusal != nil:
		return terminal(ResultRefused, DispositionNotAttempted, eff.refusal, "", nil)
	case eff.err != nil && eff.compensated:
		return terminal(ResultFailed, dispositionCompensated, nil, eff.err.Error(), eff.effects)
	case eff.err != nil && eff.partial:
		return terminal(ResultFailed, DispositionPartial, nil, eff.err.Error(), eff.effects)
	case eff.err != nil && eff.sent:
		return terminal(
			ResultUnknown,
			DispositionOutcomeUnknown,
			nil,
			"may have taken effect — verify before retrying: "+eff.err.Error(),
			nil,
		)
	case eff.err != nil:
		return terminal(ResultFailed, DispositionNotAttempted, nil, eff.err.Error(), nil)
	case ctx.Err() != nil && !eff.sent:
		return terminal(ResultFailed, DispositionNotAttempted, nil, "cancelled before any effect: "+ctx.Err().Error(), nil)
	}
	return terminal(ResultSucceeded, dispositionApplied, nil, "done", eff.effects)
}

// Run previews req and applies it when allowed, with the given confirmation. It is what the
// CLI and the simulator call; the workbench shows the preview in between.
func (c *Core) Run(ctx context.Context, req Request, confirmation string) (Preview, Outcome, error) {
	pv, err := c.Preview(ctx, req)
	if err != nil {
		return pv, Outcome{}, err
	}
	return pv, c.Apply(ctx, pv, confirmation), nil
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
