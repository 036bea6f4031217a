package govern

import (
	"context"
	"fmt"
	"strconv"

	"steward/govern/actionid"
	"steward/leases"
	"steward/leases/leaserec"
	"steward/locks"
	"steward/locks/lockrec"
	"steward/model"
)

type heartbeatAction struct{}

func (heartbeatAction) spec() Spec {
	return Spec{
		ID:      actionid.Heartbeat,
		Title:   "Heartbeat a worker's own lease and lock",
		MinRole: RoleOperator,
		Tier:    TierGatedWrite,
		Worker:  true,
	}
}

func (heartbeatAction) plan(ctx context.Context, c *Core, req Request) (*plan, error) {
	now := c.leaseNow(ctx)
	pol := c.policies()
	p, l, err := c.workerPlan(ctx, req, leases.OpHeartbeat, func(l *leaserec.Lease, f leases.Fence) leases.Verdict {
		p, _ := pol.ForLease(*l)
		return leases.CheckHeartbeat(l, f, p, now)
	})
	if l != nil {
		p.effects = []string{
			"lease " + l.LeaseID + ": expires_at moves to now + the policy TTL, heartbeat_count + 1",
			"its lock's work_lease expiry and last_heartbeat_at follow",
		}
		// A lease without its lock is a claim the lock directory does not show: renewing it
		// would keep it alive indefinitely. The worker releases it and
		// claims again.
		if st := p.state.(workerState); p.refusal == nil && !st.HasLock {
			p.refusal = refuse(
				CodeLockMissing,
				"lease "+l.LeaseID+" has no lock file naming it ("+st.Lock+" is missing or names another claim), so renewing "+
					"it would keep alive a claim the fleet cannot see. Release the lease (steward release) and claim the item again.",
			)
		}
	}
	return p, err
}

func (heartbeatAction) apply(ctx context.Context, c *Core, req Request, p *plan, attempt string) effect {
	st := p.state.(workerState)
	s, err := c.store()
	if err != nil {
		return effect{err: err}
	}
	now := c.now()
	o, err := s.Heartbeat(ctx, st.Fence, now)
	c.doStep("db-committed")
	if err != nil {
		return dbFailed(err)
	}
	if r := fromLeases(o); r != nil {
		return effect{refusal: r}
	}
	eff := []string{"lease " + st.Fence.LeaseID + " renewed until " + o.Lease.ExpiresAt.Raw}
	detail := map[string]string{
		"lease_id":         st.Fence.LeaseID,
		"expires_at":       o.Lease.ExpiresAt.Raw,
		"heartbeat_count":  strconv.FormatInt(o.Lease.HeartbeatCount, 10),
		"lease_generation": strconv.FormatInt(o.Lease.Generation, 10),
	}
	if st.HasLock {
		e := locks.ReadFile(c.ws.LocksDir, st.Lock)
		rec := e.Record
		if rec.WorkLease != nil {
			wl := *rec.WorkLease
			// Both from the renewed lease row, so that the lock's timestamps come from the
			// clock the lease's did: the DB's on PostgreSQL, which the transition stamps
			// with its own clock whatever this host's says.
			wl.ExpiresAt = lockrec.ParseTimestamp(o.Lease.ExpiresAt.Raw)
			wl.LastHeartbeatAt = lockrec.ParseTimestamp(o.Lease.LastHeartbeatAt.Raw)
			if !o.Lease.LastHeartbeatAt.OK() {
				wl.LastHeartbeatAt = lockrec.NewTimestamp(c.leaseNow(ctx))
			}
			n := o.Lease.HeartbeatCount
			wl.HeartbeatCount = &n
			rec.WorkLease = &wl
		}
		gen, err := c.lockWriter(ctx).WriteCAS(c.ws.LocksDir, st.Lock, locks.ExpectFence(st.LockGen, st.LockTSK), rec)
		if err != nil {
			return effect{sent: true, err: fmt.Errorf("the lease was renewed but its lock %s was not updated: %w", st.Lock, err)}
		}
		eff = append(eff, "lock "+st.Lock+" renewed")
		detail["lock_file"], detail["lock_generation"], detail["task_session_id"] = st.Lock, strconv.FormatInt(
			gen,
			10,
		), st.LockTSK
	}
	return effect{effects: eff, detail: detail}
}

// verify settles a heartbeat from the evidence of both its steps: the lease.renew event
// (it names the attempt; it commits with the renewal) and the lock. No event of the
// attempt is failed. Renewed, it is succeeded only when a lock of the lease — the live one,
// or its archive once the claim ended — records an expiry at or past the renewed one: the
// lock followed (this attempt or a later heartbeat brought it along). Anything else stays
// unknown with what is missing: a lease that cannot be read now (its lock cannot be matched
// to it), a lock still at the earlier expiry (the attempt stopped, or failed — a full disk
// — between the lease and the lock; heartbeat again), a lock gone or another claim's with
// no archive of this lease's that shows the renewal. A heartbeat is never settled succeeded
// from its lease alone: the lock is what every reader of the lock directory goes by.
func (heartbeatAction) verify(ctx context.Context, c *Core, intent Record) (Result, []string, bool) {
	id := intent.Target.LeaseID
	ev, unmarked, err := c.markedEvent(ctx, "lease.renew", id, intent.Attempt, intent.At)
	if err != nil {
		return "", []string{"DB unreadable: " + err.Error()}, false
	}
	if ev == nil {
		if unmarked {
			return "", []string{
				"no lease.renew event names this attempt, but that proves nothing here: the DB's events carry no attempt mark, " +
					"or lease " + id + " was renewed after the attempt began by an event that names none",
			}, false
		}
		return ResultFailed, []string{"no lease.renew event of this attempt: lease " + id + " was not renewed by it"}, true
	}
	exp := leaserec.ParseTimestamp(fmt.Sprint(ev.Detail["expires_at"]))
	got := fmt.Sprintf("event %d: lease %s renewed until %s by this attempt", ev.EventID, id, exp.Raw)
	if !exp.OK() {
		return "", []string{
			got + ", an expiry that does not parse, so no lock can be compared with it; inspect the lock and resolve by " +
				"hand (steward audit resolve)",
		}, false
	}
	follows := func(e lockrec.Entry) bool {
		wl := e.Record.WorkLease
		return !e.Missing && e.Unreadable == nil && wl != nil && wl.ExpiresAt.Valid && !wl.ExpiresAt.Time.Before(exp.Time)
	}
	l, ref, err := c.readLease(ctx, id)
	if err != nil || ref != nil {
		return "", []string{
			got + "; lease " + id + " cannot be read now, so its lock cannot be matched to it and the lock step is not " +
				"proven. Verify again once the DB reads.",
		}, false
	}
	name, e, ok := c.ownLock(l)
	switch {
	case ok && follows(e):
		return ResultSucceeded, []string{
			got + "; lock " + name + " follows (work_lease.expires_at " + e.Record.WorkLease.ExpiresAt.Text + ")",
		}, true
	case ok && e.Record.WorkLease != nil && e.Record.WorkLease.ExpiresAt.Valid:
		why := got + " but lock " + name + " still records work_lease.expires_at " + e.Record.WorkLease.ExpiresAt.Text +
			", before the renewed expiry: the attempt stopped, or its lock write failed (a full disk), between the " +
			"lease and the lock."
		if l.Status.Terminal() {
			return "", []string{
				why + " The lease has ended since (" + string(
					l.Status,
				) + "): retire the lock (steward lock retire) once it expires or its owner ends, then resolve the attempt by hand.",
			}, false
		}
		return "", []string{why + " Heartbeat again to bring the lock along (make room first if its disk is full)."}, false
	case ok:
		return "", []string{
			got + " but lock " + name + " records no expiry to compare; inspect it and resolve by hand (steward audit resolve)",
		}, false
	}
	// The live lock is gone or is another claim's: an archive of this lease's lock that
	// shows the renewed expiry proves the lock followed before the claim ended.
	archived, at := "", ""
	_ = eachArchive(c.ws.LocksDir, name, func(a lockrec.Entry) bool {
		if model.JoinOf(&a.Record, l) != model.JoinNone && follows(a) {
			archived, at = a.Name, a.Record.WorkLease.ExpiresAt.Text
		}
		return archived != ""
	})
	if archived != "" {
		return ResultSucceeded, []string{
			got + "; lock " + name + " followed before the claim ended (its archive " + archived + " records " +
				"work_lease.expires_at " + at + ")",
		}, true
	}
	return "", []string{
		got + " but lock " + name + " no longer names the lease and no archive of it shows the renewed expiry: whether " +
			"the lock followed cannot be told from the evidence. Inspect the item and resolve by hand (steward audit resolve).",
	}, false
}
