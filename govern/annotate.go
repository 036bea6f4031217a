package govern

import (
	"context"
	"slices"

	"steward/locks"
	"steward/locks/lockrec"
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
	ctx = c.withLockView(ctx)
	for i, o := range s.Orphans {
		a := c.annotateOne(ctx, *o)
		cp.Orphans[i] = &a
	}
	annotateNext(&cp)
	return &cp
}

// annotateNext gives the actions of each contention entry's resolution the annotation of
// the orphan with the same action on the same target (they are those orphans' actions), in
// a copy of the entry: a published entry is never changed.
func annotateNext(s *model.Snapshot) {
	type key struct {
		id string
		t  model.ActionTarget
	}
	var by map[key]*model.ActionRef
	for i, c := range s.Contention {
		if c.Next == nil || len(c.Next.Actions) == 0 {
			continue
		}
		if by == nil {
			by = map[key]*model.ActionRef{}
			for _, o := range s.Orphans {
				if o.Action != nil {
					by[key{o.Action.ID, o.Action.Target}] = o.Action
				}
			}
			s.Contention = slices.Clone(s.Contention)
		}
		cc, next := *c, *c.Next
		next.Actions = slices.Clone(next.Actions)
		for j, a := range next.Actions {
			if o := by[key{a.ID, a.Target}]; o != nil {
				next.Actions[j].Allowed, next.Actions[j].Refusal = o.Allowed, o.Refusal
			}
		}
		cc.Next = &next
		s.Contention[i] = &cc
	}
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
		ref.Allowed, ref.Refusal = &no, &model.Refusal{
			Code:    CodeUnknownAction,
			Message: "the governed core knows no action " + ref.ID,
		}
		return o
	}
	req := Request{Action: ref.ID, Target: Target{LeaseID: ref.Target.LeaseID, LockFile: ref.Target.LockFile}}
	p, err := c.plan(ctx, a, req)
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

// Annotator annotates a stream of snapshots from one live model, previewing only the
// orphans that are new: a published orphan is immutable and the live model re-derives (as
// a new value) every orphan whose sources changed or whose deadline passed, so an orphan
// seen before keeps its annotation. Without this, a workbench previewed every orphan's
// action — a read of the lock and the lease each — on every snapshot, and handed the
// screen new orphan values each time. An annotation is advice for the list; the action
// menu previews afresh, and an apply re-checks every fence. Not safe for concurrent use.
type Annotator struct {
	c    *Core
	prev map[*model.Orphan]*model.Orphan
}

// NewAnnotator returns an Annotator over c.
func (c *Core) NewAnnotator() *Annotator { return &Annotator{c: c} }

// Snapshot is Annotate with the annotations of orphans seen in the previous snapshot reused.
func (a *Annotator) Snapshot(ctx context.Context, s *model.Snapshot) *model.Snapshot {
	if s == nil {
		return s
	}
	next := make(map[*model.Orphan]*model.Orphan, len(s.Orphans))
	viewed := false
	cp := *s
	cp.Orphans = make([]*model.Orphan, len(s.Orphans))
	for i, o := range s.Orphans {
		got, ok := a.prev[o]
		if !ok {
			if !viewed {
				ctx, viewed = a.c.withLockView(ctx), true
			}
			x := a.c.annotateOne(ctx, *o)
			got = &x
		}
		next[o], cp.Orphans[i] = got, got
	}
	a.prev = next
	annotateNext(&cp)
	return &cp
}

// lockViewKey carries a LockView in the context of one annotation pass.
type lockViewKey struct{}

// LockView is a view of the lock directory an annotation pass looks items up in: the
// live lock files that name item k, read fresh (locks.IndexView, locks.Tracked).
type LockView interface {
	Lookup(k lockrec.Key) []lockrec.Entry
}

// withLockView returns ctx carrying one view of the lock directory for the previews of one
// annotation pass: the directory is listed and stat'ed once per pass, not once per orphan
// (at 10,000 claims with 100 orphans, steward status spent 19 of its 22 CPU seconds
// stat'ing the directory again for each). The view is advice, as an annotation is: the
// action menu previews afresh and an apply re-checks every fence on the index itself. When
// the directory cannot be listed, each preview finds so itself.
func (c *Core) withLockView(ctx context.Context) context.Context {
	if _, ok := ctx.Value(lockViewKey{}).(LockView); ok {
		return ctx
	}
	v, err := c.lockIndex().View()
	if err != nil {
		return ctx
	}
	return context.WithValue(ctx, lockViewKey{}, v)
}

// WithLockView returns ctx carrying v as the view of the lock directory that Annotate's
// previews look items up in, instead of refreshing the core's index: a surface that has
// just read the whole directory for the snapshot it annotates (steward status) passes the
// view of that read (locks.ViewOf), and a live feed the view its live model keeps
// (locks.Tracked), so the directory is not listed and stat'ed again. The previews read
// each item's files fresh, as with the core's own view. A nil v leaves ctx as it is.
func WithLockView(ctx context.Context, v LockView) context.Context {
	switch x := v.(type) {
	case nil:
		return ctx
	case *locks.IndexView:
		if x == nil {
			return ctx
		}
	case *locks.Tracked:
		if x == nil {
			return ctx
		}
	}
	return context.WithValue(ctx, lockViewKey{}, v)
}
