package govern

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"steward/leases"
	"steward/leases/leaserec"
	"steward/locks"
	"steward/locks/lockrec"
	"steward/model"
)

// markedEvent finds the event of type typ on lease leaseID written by attempt (its detail
// names the attempt, see leases.WithAttempt). unmarked reports an event of that type on
// the lease at or after since that names no attempt: written by a steward that did not
// mark its events, or by the supervised system — then the evidence cannot tell.
func (c *Core) markedEvent(
	ctx context.Context,
	typ, leaseID, attempt, since string,
) (found *leaserec.Event, unmarked bool, err error) {
	r, err := c.reader()
	if err != nil {
		return nil, false, err
	}
	if ok, err := r.HasColumn(ctx, "events", "detail_json"); err != nil {
		return nil, false, err
	} else if !ok {
		return nil, true, nil // the DB's events cannot name an attempt: absence proves nothing
	}
	from := leaserec.ParseTimestamp(since)
	for cursor := int64(0); ; {
		evs, _, err := r.EventsSince(ctx, cursor, 5000)
		if err != nil {
			return nil, false, err
		}
		for i := range evs {
			e := &evs[i]
			if e.EventType != typ || fmt.Sprint(e.Detail["lease_id"]) != leaseID {
				continue
			}
			switch a, ok := e.Detail[leaserec.DetailAttempt]; {
			case ok && fmt.Sprint(a) == attempt:
				return e, false, nil
			case !ok && (!from.OK() || !e.CreatedAt.OK() || !e.CreatedAt.Time.Before(from.Time.Add(-time.Second))):
				unmarked = true
			}
		}
		if len(evs) < 5000 {
			return nil, unmarked, nil
		}
		cursor = evs[len(evs)-1].EventID
	}
}

// ownLease reads a worker's own lease: it must be held by the acting session, and the
// request must prove it comes from the claimant where the lease or the core asks for proof
// (proveOwner).
func (c *Core) ownLease(ctx context.Context, req Request) (*leaserec.Lease, *Refusal, error) {
	l, ref, err := c.readLease(ctx, req.Target.LeaseID)
	if err != nil || ref != nil {
		return nil, ref, err
	}
	if req.Target.Session == "" || l.SessionID != req.Target.Session {
		return l, refuse(
			CodeNotOwner,
			fmt.Sprintf(
				"lease %s is held by session %q, not %q; a worker acts only on its own lease",
				l.LeaseID,
				l.SessionID,
				req.Target.Session,
			),
		), nil
	}
	if r := c.proveOwner(l, req); r != nil {
		return l, r, nil
	}
	return l, nil, nil
}

// ownLock finds the lock file of a worker's lease: the live lock of the lease's item that
// the live model joins to it (model.JoinOf: naming the lease, else naming no lease and
// owned by the lease's session), under any file name. name is the file found, or the one
// the lease's claim wrote (its provenance), or steward's name for the item.
func (c *Core) ownLock(l *leaserec.Lease) (name string, e lockrec.Entry, ok bool) {
	name, _ = locks.Name(lockKey(l.Work))
	if v, ok := l.Provenance[lockFileKey].(string); ok && locks.ValidName(v) {
		name = v
	}
	e = locks.ReadFile(c.ws.LocksDir, name)
	// The file found is this lease's when it is a live lock of the lease's item (its record
	// names that item, as the index's lookup requires) and names the lease.
	k := lockKey(l.Work)
	if !e.Missing && e.Unreadable == nil && e.HasKey && e.Key.Identity() == k.Identity() &&
		e.Record.LeaseID == l.LeaseID {
		return name, e, true
	}
	es, err := c.lockIndex().Lookup(k)
	if err != nil {
		return name, e, false
	}
	var bySession *lockrec.Entry
	for i := range es {
		if es[i].Unreadable != nil {
			continue
		}
		switch model.JoinOf(&es[i].Record, l) {
		case model.JoinByLeaseID:
			return es[i].Name, es[i], true
		case model.JoinBySession:
			if bySession == nil {
				bySession = &es[i]
			}
		}
	}
	if bySession != nil {
		return bySession.Name, *bySession, true
	}
	return name, e, false
}

// heldBy returns the fence and the proof of ownership a worker's request on its own lease
// carries (heartbeat, release, ask); none for any other.
func heldBy(req Request) (HeldFence, OwnerProof) {
	switch p := req.Params.(type) {
	case OwnLeaseParams:
		return p.HeldFence, p.OwnerProof
	case AskParams:
		return p.HeldFence, p.OwnerProof
	}
	return HeldFence{}, OwnerProof{}
}

// staleFence compares the fence values a worker holds with what was read.
func staleFence(held HeldFence, st workerState) *Refusal {
	var diffs []string
	if v := held.ExpiresAt; v != "" && v != st.Fence.ExpiresAt {
		diffs = append(diffs, fmt.Sprintf("lease expires_at is %q, you hold %q", st.Fence.ExpiresAt, v))
	}
	if v := held.LeaseGeneration; v != "" {
		g, err := strconv.ParseInt(v, 10, 64)
		switch {
		case err != nil:
			return refuse(CodeInvalidRequest, "the expected lease generation must be a whole number, got "+strconv.Quote(v))
		case g != st.Fence.Generation:
			diffs = append(diffs, fmt.Sprintf("lease_generation_id is %d, you hold %d", st.Fence.Generation, g))
		}
	}
	if v := held.LockGeneration; v != "" {
		g, err := strconv.ParseInt(v, 10, 64)
		switch {
		case err != nil:
			return refuse(CodeInvalidRequest, "the expected lock generation must be a whole number, got "+strconv.Quote(v))
		case !st.HasLock && g != 0:
			diffs = append(diffs, fmt.Sprintf("no lock file names this lease, you hold lock_generation %d", g))
		case !st.HasLock:
		case g != st.LockGen:
			diffs = append(diffs, fmt.Sprintf("lock_generation is %d, you hold %d", st.LockGen, g))
		}
	}
	if v := held.TaskSession; v != "" && v != st.LockTSK {
		diffs = append(diffs, fmt.Sprintf("task_session_id is %q, you hold %q", st.LockTSK, v))
	}
	if len(diffs) == 0 {
		return nil
	}
	return refuse(
		CodeFenceMoved,
		"the fence you hold is stale ("+strings.Join(
			diffs,
			"; ",
		)+"); nothing was changed. Re-read your lease and decide afresh; do not retry with the old values.",
	)
}

type workerState struct {
	Fence   leases.Fence
	Lock    string
	LockGen int64
	LockTSK string
	HasLock bool
}

func (c *Core) workerPlan(
	ctx context.Context,
	req Request,
	op leases.Op,
	check func(l *leaserec.Lease, f leases.Fence) leases.Verdict,
) (*plan, *leaserec.Lease, error) {
	if r, err := c.schemaRefusal(ctx, op); err != nil || r != nil {
		return &plan{refusal: r}, nil, err
	}
	l, ref, err := c.ownLease(ctx, req)
	if err != nil || l == nil {
		return &plan{refusal: ref}, nil, err
	}
	f := leases.FenceOf(*l)
	st := workerState{Fence: f}
	name, e, ok := c.ownLock(l)
	st.Lock = name
	if ok {
		st.HasLock, st.LockGen, st.LockTSK = true, e.Record.Generation(), e.Record.TaskSessionID()
	}
	p := &plan{state: st, refusal: ref, evidence: leaseEvidence(l, c.now())}
	if p.refusal == nil {
		p.refusal = verdict(check(l, f))
	}
	if p.refusal == nil {
		fence, _ := heldBy(req)
		p.refusal = staleFence(fence, st)
	}
	if !ok {
		p.evidence = append(p.evidence, "no lock file naming this lease ("+name+")")
	}
	p.fences = []string{fenceText(f)}
	if ok {
		p.fences = append(
			p.fences,
			fmt.Sprintf("lock %s at lock_generation %d, task_session_id %s", name, st.LockGen, st.LockTSK),
		)
	}
	return p, l, nil
}
