package govern

import (
	"context"
	"fmt"
	"steward/govern/actionid"
)

// undo applies the inverse an earlier attempt recorded, through the inverse action's own
// guards and fences.
type undo struct{}

func (undo) spec() Spec {
	return Spec{
		ID:      actionid.Undo,
		Title:   "Undo an earlier attempt by applying the inverse it recorded",
		MinRole: RoleOperator,
		Tier:    TierPrivileged,
	}
}

// undoState wraps the inverse action's own fence snapshot.
type undoState struct {
	Inverse Request
	Inner   any
}

// inverseOf finds the inverse a succeeded attempt recorded, and whether it was undone.
func (c *Core) inverseOf(attempt string) (*Request, *Refusal, error) {
	if c.audit == nil {
		return nil, refuse(
			CodeAuditUnavailable,
			"no audit log is open, so no inverse can be found; open one with --audit",
		), nil
	}
	recs, _, err := ReadAudit(c.audit.Path())
	if err != nil {
		return nil, nil, err
	}
	var found *Attempt
	atts := Attempts(recs)
	for i := range atts {
		if atts[i].ID == attempt {
			found = &atts[i]
		}
	}
	if found == nil {
		return nil, refuse(CodeNotFound, "no attempt "+attempt+" in the audit log; run `steward audit` to find it"), nil
	}
	if st := found.Status(); st != ResultSucceeded {
		return nil, refuse(
			codeNoInverse,
			fmt.Sprintf(
				"attempt %s is %s, not succeeded; only an applied change can be undone (settle an unknown one with `steward "+
					"audit verify` first)",
				attempt,
				st,
			),
		), nil
	}
	var inv *Request
	if found.Outcome != nil {
		inv = found.Outcome.Inverse
	}
	for _, r := range found.Resolutions {
		if r.Inverse != nil {
			inv = r.Inverse
		}
	}
	if inv == nil {
		return nil, refuse(
			codeNoInverse,
			"attempt "+attempt+" recorded no inverse; its action cannot be undone. Recover forward instead.",
		), nil
	}
	for _, a := range atts {
		if a.Outcome != nil && a.Outcome.Action == actionid.Undo && a.Outcome.Target.Attempt == attempt &&
			a.Status() == ResultSucceeded {
			return nil, refuse("already_undone", "attempt "+attempt+" was undone already by "+a.ID+"; nothing to do"), nil
		}
	}
	return inv, nil, nil
}

func (undo) plan(ctx context.Context, c *Core, req Request) (*plan, error) {
	if req.Target.Attempt == "" {
		return &plan{refusal: refuse(CodeInvalidRequest, "name the attempt to undo with --attempt")}, nil
	}
	inv, ref, err := c.inverseOf(req.Target.Attempt)
	if err != nil || ref != nil {
		return &plan{refusal: ref}, err
	}
	inner, ok := c.actions[inv.Action]
	if !ok || inv.Action == actionid.Undo {
		return &plan{
			refusal: refuse(codeNoInverse, "the recorded inverse "+inv.Action+" is not an action this steward knows"),
		}, nil
	}
	p, err := inner.plan(ctx, c, *inv)
	if err != nil {
		return &plan{}, err
	}
	if r := c.gate(inner.spec(), *inv); r != nil && p.refusal == nil {
		p.refusal = r
	}
	out := *p
	out.state = undoState{Inverse: *inv, Inner: p.state}
	out.effects = append([]string{"undo of " + req.Target.Attempt + " by " + inv.Action}, p.effects...)
	out.inverse = nil
	return &out, nil
}

func (undo) apply(ctx context.Context, c *Core, req Request, p *plan, attempt string) effect {
	st := p.state.(undoState)
	inner := c.actions[st.Inverse.Action]
	ip := *p
	ip.state = st.Inner
	return inner.apply(ctx, c, st.Inverse, &ip, attempt)
}

// verify settles an undo the way its inverse action's own verifier settles that action:
// the undo applied the inverse under its own attempt id, so the evidence carries it.
func (undo) verify(ctx context.Context, c *Core, intent Record) (Result, []string, bool) {
	inv, err := c.recordedInverse(intent.Target.Attempt)
	if err != nil || inv == nil {
		return "", []string{"the inverse of " + intent.Target.Attempt + " cannot be found in the audit log"}, false
	}
	inner, ok := c.actions[inv.Action]
	if !ok || inv.Action == actionid.Undo {
		return "", []string{"the recorded inverse " + inv.Action + " is not an action this steward knows"}, false
	}
	as := intent
	as.Action, as.Target = inv.Action, inv.Target
	res, ev, ok := inner.verify(ctx, c, as)
	return res, append([]string{"undo of " + intent.Target.Attempt + " by " + inv.Action}, ev...), ok
}

// recordedInverse returns the inverse attempt recorded (nil when none), whatever its
// current status.
func (c *Core) recordedInverse(attempt string) (*Request, error) {
	if c.audit == nil {
		return nil, errAuditUnavailable
	}
	recs, _, err := ReadAudit(c.audit.Path())
	if err != nil {
		return nil, err
	}
	var inv *Request
	for _, a := range Attempts(recs) {
		if a.ID != attempt {
			continue
		}
		if a.Outcome != nil && a.Outcome.Inverse != nil {
			inv = a.Outcome.Inverse
		}
		for _, r := range a.Resolutions {
			if r.Inverse != nil {
				inv = r.Inverse
			}
		}
	}
	return inv, nil
}
