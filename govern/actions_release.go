package govern

import (
	"context"
	"errors"
	"fmt"

	"steward/govern/actionid"
	"steward/leases"
	"steward/leases/leaserec"
	"steward/locks"
	"steward/locks/lockrec"
)

type releaseAction struct{}

func (releaseAction) spec() Spec {
	return Spec{
		ID:      actionid.Release,
		Title:   "Release a worker's own lease and archive its lock",
		MinRole: RoleOperator,
		Tier:    TierGatedWrite,
		Worker:  true,
	}
}

func (releaseAction) plan(ctx context.Context, c *Core, req Request) (*plan, error) {
	p, l, err := c.workerPlan(
		ctx,
		req,
		leases.OpRelease,
		func(l *leaserec.Lease, f leases.Fence) leases.Verdict { return leases.CheckRelease(l, f) },
	)
	if l != nil {
		p.effects = []string{"lease " + l.LeaseID + ": active → released", "its lock moves to retired/ with a release block"}
		if st, _ := p.state.(workerState); p.refusal != nil && p.refusal.Code == codeAlreadyReleased && !st.HasLock {
			// A worker repeating its own release (a retry after a lost response, a script's
			// cleanup) asked for what is already so: success, with nothing to change. Only
			// its own (ownLease refuses not_owner first) and only when no live lock still
			// names the lease — a release stopped between the lease and the lock stays
			// refused, so the leftover lock is seen.
			p.refusal, p.effects = nil, nil
			p.already = "already released: lease " + l.LeaseID + " was released (" + l.EndReason + ") and no lock names it; " +
				"nothing changed"
		}
	}
	return p, err
}

func (releaseAction) apply(ctx context.Context, c *Core, req Request, p *plan, attempt string) effect {
	return c.releaseOwn(ctx, p.state.(workerState), attempt, "released")
}

// releaseOwn releases a worker's lease and archives its lock (also the last step of
// clarification.ask).
func (c *Core) releaseOwn(ctx context.Context, st workerState, attempt, reason string) effect {
	s, err := c.store()
	if err != nil {
		return effect{err: err}
	}
	o, err := s.Release(ctx, st.Fence, reason, c.now())
	c.doStep("db-committed")
	if err != nil {
		return dbFailed(err)
	}
	if r := fromLeases(o); r != nil {
		return effect{refusal: r}
	}
	eff := []string{"lease " + st.Fence.LeaseID + " released"}
	detail := map[string]string{"lease_id": st.Fence.LeaseID}
	if st.HasLock {
		archived, err := c.lockWriter(ctx).
			Archive(c.ws.LocksDir, st.Lock, locks.ExpectFence(st.LockGen, st.LockTSK), lockrec.RecoveryBlock{
				Action: "release", ActionID: actionid.Release, AuditAttemptID: attempt, Actor: lockActor(c.actor), Reason: reason,
			})
		if err != nil {
			if note, done := lockNoLongerOurs(c.ws.LocksDir, st, err); done {
				if archived != "" {
					// The archive written before the lock moved could not be removed again.
					note += "; the archive written meanwhile could not be removed and stays as " + archived +
						", holding a lock_generation that was never released — remove it by hand"
				}
				return effect{effects: append(eff, note), detail: detail}
			}
			return effect{
				sent: true,
				err:  fmt.Errorf("the lease was released but its lock %s was not archived: %w", st.Lock, err),
			}
		}
		eff = append(eff, "lock archived as "+archived)
		detail["lock_file"], detail["archived_as"] = st.Lock, archived
	}
	return effect{effects: eff, detail: detail}
}

// verify settles a release from its lease.release event (it names the attempt) and the
// lock's archive (its recovery block names the attempt).
func (releaseAction) verify(ctx context.Context, c *Core, intent Record) (Result, []string, bool) {
	return c.verifyRelease(ctx, intent)
}

func (c *Core) verifyRelease(ctx context.Context, intent Record) (Result, []string, bool) {
	id := intent.Target.LeaseID
	ev, unmarked, err := c.markedEvent(ctx, "lease.release", id, intent.Attempt, intent.At)
	if err != nil {
		return "", []string{"DB unreadable: " + err.Error()}, false
	}
	l, ref, err := c.readLease(ctx, id)
	if err != nil || ref != nil {
		return "", []string{"lease " + id + " not readable"}, false
	}
	if ev == nil {
		if l.Status.Terminal() && unmarked {
			return "", []string{
				"lease " + id + " is " + string(
					l.Status,
				) + " (" + l.EndReason + ") and no lease.release event names this attempt, but that proves nothing here: the " +
					"DB's events carry no attempt mark, or an event that names none ended it after the attempt began",
			}, false
		}
		return ResultFailed, []string{"no lease.release event of this attempt; lease " + id + " is " + string(l.Status)}, true
	}
	got := fmt.Sprintf("event %d: lease %s released by this attempt", ev.EventID, id)
	name, _ := locks.Name(lockKey(l.Work))
	if v, ok := l.Provenance[lockFileKey].(string); ok && locks.ValidName(v) {
		name = v
	}
	archived := ""
	_ = eachArchive(c.ws.LocksDir, name, func(e lockrec.Entry) bool {
		if b, ok := e.Record.Recovery(); ok && b.AuditAttemptID == intent.Attempt {
			archived = e.Name
		}
		return archived != ""
	})
	if e := locks.ReadFile(c.ws.LocksDir, name); !e.Missing && (e.Unreadable != nil || e.Record.LeaseID == id) {
		if archived != "" {
			return "", []string{
				got + "; its lock was archived as " + archived + " but " + name + " is still live: the attempt stopped between " +
					"the archive and the removal. Retire the lock (steward lock retire) once it expires or its owner ends.",
			}, false
		}
		return "", []string{
			got + " but its lock " + name + " is still live: the attempt stopped between the lease and the lock. Retire the " +
				"lock (steward lock retire) once it expires or its owner ends.",
		}, false
	}
	if archived != "" {
		return ResultSucceeded, []string{got + "; its lock was archived as " + archived}, true
	}
	return ResultSucceeded, []string{
		got + "; lock " + name + " no longer names it (archived by someone else, or the item was claimed again)",
	}, true
}

// lockNoLongerOurs tells, after the archive of a released lease's lock failed with err,
// whether the lock is no longer the released lease's to archive: it is gone (someone
// archived it) or it was rewritten to name another lease (the item was claimed again
// between the release and the archive — the new owner's lock must stay). Then the release
// is complete, and the note says why the lock was left. Anything else (the file still
// names the released lease, or cannot be read) leaves the lock's state unknown.
func lockNoLongerOurs(dir string, st workerState, err error) (string, bool) {
	if !errors.Is(err, locks.ErrFenceMoved) && !errors.Is(err, locks.ErrNotFound) {
		return "", false
	}
	e := locks.ReadFile(dir, st.Lock)
	switch {
	case e.Missing:
		return "lock " + st.Lock + " already gone (archived by someone else)", true
	case e.Unreadable != nil || e.Record.LeaseID == "" || e.Record.LeaseID == st.Fence.LeaseID:
		return "", false
	}
	return "lock " + st.Lock + " left in place: it now names lease " + e.Record.LeaseID + " (the item was claimed " +
		"again)", true
}
