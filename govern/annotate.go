package govern

import (
	"context"

	"steward/model"
)

// Annotate previews the reconciling action of every orphan in s and returns a copy of s
// whose orphans say whether the action's guards allow it now, with the refusal when they do
// not. It judges the state, not the caller: the role and read-only gates are left to the
// moment someone applies, so a viewer sees what an operator could do. It writes nothing.
func (c *Core) Annotate(ctx context.Context, s *model.Snapshot) *model.Snapshot {
	if s == nil || len(s.Orphans) == 0 {
		return s
	}
	cp := *s
	cp.Orphans = make([]*model.Orphan, len(s.Orphans))
	for i, o := range s.Orphans {
		a := c.annotateOne(ctx, *o)
		cp.Orphans[i] = &a
	}
	return &cp
}

func (c *Core) annotateOne(ctx context.Context, o model.Orphan) model.Orphan {
	if o.Action == nil {
		return o
	}
	ref := *o.Action
	o.Action = &ref
	a, ok := c.actions[ref.ID]
	if !ok {
		no := false
		ref.Allowed, ref.Refusal = &no, &model.Refusal{Code: CodeUnknownAction, Message: "the governed core knows no action " + ref.ID}
		return o
	}
	req := Request{Action: ref.ID, Target: Target{LeaseID: ref.Target.LeaseID, LockFile: ref.Target.LockFile}}
	p, err := a.plan(ctx, c, req)
	allowed := err == nil && p.refusal == nil
	ref.Allowed = &allowed
	switch {
	case err != nil:
		ref.Refusal = &model.Refusal{Code: CodeSourceUnavailable, Message: Cap("could not preview: " + err.Error())}
	case p.refusal != nil:
		ref.Refusal = &model.Refusal{Code: p.refusal.Code, Message: p.refusal.Message}
	}
	return o
}
