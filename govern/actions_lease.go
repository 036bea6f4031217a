package govern

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"steward/govern/actionid"
	"steward/leases"
	"steward/leases/leaserec"
)

// readLease reads one lease for a plan. A refusal is returned for a bad request or a
// lease that does not exist; an error when the DB cannot be read.
func (c *Core) readLease(ctx context.Context, id string) (*leaserec.Lease, *Refusal, error) {
	if id == "" {
		return nil, refuse(CodeInvalidRequest, "no lease id given; name the lease with --lease"), nil
	}
	r, err := c.reader()
	if err != nil {
		return nil, nil, err
	}
	l, found, err := r.LeaseByID(ctx, id)
	if err != nil {
		c.dropHandles()
		return nil, nil, err
	}
	if !found {
		return nil, refuse(
			CodeNotFound,
			fmt.Sprintf("no lease %q in the control-plane DB; refresh and pick a lease that exists", id),
		), nil
	}
	return &l, nil, nil
}

func ago(now, t time.Time) string {
	if t.After(now) {
		// t.Sub(now), not -now.Sub(t): a far-future time saturates at the largest
		// duration, and negating the smallest one overflows.
		return "in " + t.Sub(now).Round(time.Second).String()
	}
	return now.Sub(t).Round(time.Second).String() + " ago"
}

// leaseEvidence describes what the guards read about a lease.
func leaseEvidence(l *leaserec.Lease, now time.Time) []string {
	ev := []string{
		fmt.Sprintf("lease %s: status %s, held by session %s, role %s", l.LeaseID, l.Status, l.SessionID, l.Role),
	}
	switch {
	case l.ExpiresAt.OK():
		ev = append(ev, fmt.Sprintf("expires_at %s (%s)", l.ExpiresAt.Raw, ago(now, l.ExpiresAt.Time)))
	default:
		ev = append(ev, fmt.Sprintf("expires_at %q is %s", l.ExpiresAt.Raw, l.ExpiresAt.State))
	}
	if l.LastHeartbeatAt.OK() {
		ev = append(
			ev,
			fmt.Sprintf(
				"last heartbeat %s (%s), %d heartbeats",
				l.LastHeartbeatAt.Raw,
				ago(now, l.LastHeartbeatAt.Time),
				l.HeartbeatCount,
			),
		)
	}
	if l.Work.Number > 0 {
		ev = append(ev, "work item "+itemOf(l.Work).String())
	}
	return ev
}

func fenceText(f leases.Fence) string {
	return fmt.Sprintf(
		"lease %s is still %s, held by %s, expires_at %q (checked inside BEGIN IMMEDIATE)",
		f.LeaseID,
		f.Status,
		f.SessionID,
		f.ExpiresAt,
	)
}

// reclaimExpired ends an expired lease so its item is free again.
type reclaimExpired struct{}

func (reclaimExpired) spec() Spec {
	return Spec{
		ID:      actionid.ReclaimExpired,
		Title:   "Reclaim an expired lease (end it; the item returns to the pool)",
		MinRole: RoleOperator,
		Tier:    TierGatedWrite,
	}
}

func (reclaimExpired) plan(ctx context.Context, c *Core, req Request) (*plan, error) {
	if r, err := c.schemaRefusal(ctx, leases.OpReclaim); err != nil || r != nil {
		return &plan{refusal: r}, err
	}
	l, ref, err := c.readLease(ctx, req.Target.LeaseID)
	if err != nil || ref != nil {
		return &plan{refusal: ref}, err
	}
	now := c.leaseNow(ctx)
	f := leases.FenceOf(*l)
	p := &plan{state: f, refusal: verdict(leases.CheckReclaimExpired(l, f, now)), evidence: leaseEvidence(l, now)}
	if p.refusal == nil {
		// Expired by this host's clock: on SQLite only as far as that clock is trusted.
		p.refusal = c.clockRefusal(actionid.ReclaimExpired, now, leaseStamps(l)...)
	}
	p.evidence = append(p.evidence, c.ownerText(l))
	p.effects = []string{
		fmt.Sprintf("lease %s: status active → expired (end_reason reclaimed)", l.LeaseID),
		"work item " + itemOf(l.Work).String() + " returns to the pool; steward assigns it to no one",
		"a lease.reclaim event is recorded",
	}
	p.effects = append(p.effects, c.remains(ctx, l)...)
	p.fences = []string{fenceText(f)}
	return p, nil
}

// ownerText names the lease owner's process and whether it is alive, as the guards see it.
func (c *Core) ownerText(l *leaserec.Lease) string {
	owner := c.liveness(l.OwnerPID, l.OwnerHost)
	host, hostWhy := c.rowHost(l.OwnerHost)
	s := fmt.Sprintf("owner pid %d on host %q: %s", l.OwnerPID, host, owner)
	if hostWhy != "" {
		s += " (" + hostWhy + ")"
	}
	if owner == leaserec.ProcessAlive {
		s += " — the worker is still running; it finds its lease ended at its next heartbeat"
	}
	return s
}

// remains says what is left after a lease ends: the item's lock files stay in the lock
// directory (a lease action never touches them), and so does the worktree.
func (c *Core) remains(ctx context.Context, l *leaserec.Lease) []string {
	var out []string
	if l.Work.Number > 0 {
		if files, err := c.itemLocks(ctx, *itemOf(l.Work)); err != nil {
			out = append(out, "the lock directory could not be read to say which lock files stay: "+err.Error())
		} else {
			for _, f := range files {
				out = append(out, "remains: lock file "+f+" stays in the lock directory (lock.retire, or item.recover for the "+
					"whole item, retires it)")
			}
		}
	}
	if l.WorktreePath != "" {
		out = append(out, "remains: the worktree "+l.WorktreePath+" is not touched")
	}
	return out
}

func (reclaimExpired) apply(ctx context.Context, c *Core, req Request, p *plan, attempt string) effect {
	s, err := c.store()
	if err != nil {
		return effect{err: err}
	}
	o, err := s.ReclaimExpired(ctx, p.state.(leases.Fence), "steward:"+attempt, c.now())
	c.doStep("db-committed")
	if err != nil {
		return dbFailed(err)
	}
	if r := fromLeases(o); r != nil {
		return effect{refusal: r}
	}
	return effect{effects: p.effects}
}

func (reclaimExpired) verify(ctx context.Context, c *Core, intent Record) (Result, []string, bool) {
	return c.verifyLeaseEnded(ctx, intent, "lease.reclaim", "reclaimed_by")
}

// verifyLeaseEnded settles an unknown lease transition: the attempt's own event in the DB
// proves it happened; a lease still as the intent fenced it proves it did not.
func (c *Core) verifyLeaseEnded(ctx context.Context, intent Record, eventType, byKey string) (Result, []string, bool) {
	r, err := c.reader()
	if err != nil {
		return "", []string{"DB unreadable: " + err.Error()}, false
	}
	l, found, err := r.LeaseByID(ctx, intent.Target.LeaseID)
	if err != nil || !found {
		return "", []string{"lease not readable"}, false
	}
	mark := "steward:" + intent.Attempt
	for cursor := int64(0); ; {
		evs, _, err := r.EventsSince(ctx, cursor, 5000)
		if err != nil {
			return "", []string{"events unreadable: " + err.Error()}, false
		}
		for _, e := range evs {
			// On a DB whose events have no session_id or detail_json (the seed's five
			// columns), the transition names the acting session in the message instead.
			if e.EventType == eventType &&
				(e.SessionID == mark || fmt.Sprint(e.Detail[byKey]) == mark || fmt.Sprint(e.Detail["actor"]) == mark ||
					strings.Contains(e.Message, "[session "+mark+"]")) {
				return ResultSucceeded, []string{
					fmt.Sprintf("event %d %s by %s; lease %s is %s", e.EventID, e.EventType, mark, l.LeaseID, l.Status),
				}, true
			}
		}
		if len(evs) < 5000 {
			break
		}
		cursor = evs[len(evs)-1].EventID
	}
	return ResultFailed, []string{
		fmt.Sprintf(
			"no %s event of this attempt; lease %s is %s (end_reason %q)",
			eventType,
			l.LeaseID,
			l.Status,
			l.EndReason,
		),
	}, true
}

// abandonStale ends a stale lease (dead owner, missing worktree, missed heartbeats,
// absolute cap) with its evidence recorded.
type abandonStale struct{}

func (abandonStale) spec() Spec {
	return Spec{
		ID:      actionid.AbandonStale,
		Title:   "Abandon a stale lease (dead owner or missing worktree), evidence recorded",
		MinRole: RoleOperator,
		Tier:    TierPrivileged,
	}
}

// abandonState is the fence of an abandon: the lease and the evidence it was judged on.
type abandonState struct {
	Fence    leases.Fence
	Owner    leaserec.ProcessState
	Worktree leaserec.WorktreeState
}

func (abandonStale) plan(ctx context.Context, c *Core, req Request) (*plan, error) {
	if r, err := c.schemaRefusal(ctx, leases.OpAbandon); err != nil || r != nil {
		return &plan{refusal: r}, err
	}
	l, ref, err := c.readLease(ctx, req.Target.LeaseID)
	if err != nil || ref != nil {
		return &plan{refusal: ref}, err
	}
	now := c.leaseNow(ctx)
	owner := c.liveness(l.OwnerPID, l.OwnerHost)
	wt, wtWhy := c.worktreeState(l.WorktreePath, l.OwnerHost)
	ev := leaserec.Evidence{Owner: owner, Worktree: wt}
	f := leases.FenceOf(*l)
	pol, polWhy := c.policies().ForLease(*l)
	v, fr := leases.CheckAbandon(l, f, pol, ev, now)
	p := &plan{state: abandonState{Fence: f, Owner: owner, Worktree: wt}, refusal: verdict(v)}
	host, hostWhy := c.rowHost(l.OwnerHost)
	ownerText := fmt.Sprintf("owner pid %d on host %q: %s", l.OwnerPID, host, owner)
	if hostWhy != "" {
		ownerText += " (" + hostWhy + ")"
	}
	p.evidence = append(leaseEvidence(l, now), ownerText, "worktree: "+string(wt)+" — "+wtWhy,
		"policy "+string(pol.TaskClass)+": "+polWhy)
	if fr.Value != "" {
		p.evidence = append(p.evidence, "freshness: "+string(fr.Value))
		p.evidence = append(p.evidence, fr.Reasons...)
	}
	if p.refusal == nil && (fr.Value == leaserec.FreshStaleMissedHeartbeat || fr.Value == leaserec.FreshStaleAbsoluteCap) {
		// Stale by this host's clock: on SQLite only as far as that clock is trusted.
		p.refusal = c.clockRefusal(actionid.AbandonStale, now, leaseStamps(l)...)
	}
	if p.refusal != nil && p.refusal.Code == string(leases.CodeNotStale) &&
		(owner == leaserec.ProcessUnknown || wt == leaserec.WorktreeUnknown) &&
		fr.Value == leaserec.FreshActive {
		p.refusal = refuse(
			codeLivenessUnproven,
			p.refusal.Message+". The owner's liveness or worktree is unknown here (another host, or a path steward will not "+
				"follow), and unknown never counts as dead: check on the owner's host, or wait for expiry and reclaim.",
		)
	}
	p.effects = []string{
		fmt.Sprintf("lease %s: status active → abandoned (end_reason %s)", l.LeaseID, fr.Value),
		"a lease.abandon event records the evidence above",
		"work item " + itemOf(l.Work).String() + " returns to the pool; steward assigns it to no one",
	}
	p.effects = append(p.effects, c.remains(ctx, l)...)
	p.fences = []string{fenceText(f), fmt.Sprintf("owner still %s and worktree still %s when re-checked", owner, wt)}
	return p, nil
}

func (abandonStale) apply(ctx context.Context, c *Core, req Request, p *plan, attempt string) effect {
	st := p.state.(abandonState)
	s, err := c.store()
	if err != nil {
		return effect{err: err}
	}
	o, err := s.Abandon(ctx, leases.AbandonRequest{
		Fence:    st.Fence,
		Evidence: leaserec.Evidence{Owner: st.Owner, Worktree: st.Worktree},
		Actor:    "steward:" + attempt,
		Detail:   map[string]any{"operator": c.who(), "evidence": p.evidence},
	}, c.now())
	c.doStep("db-committed")
	if err != nil {
		return dbFailed(err)
	}
	if r := fromLeases(o); r != nil {
		return effect{refusal: r}
	}
	return effect{effects: p.effects}
}

func (abandonStale) verify(ctx context.Context, c *Core, intent Record) (Result, []string, bool) {
	return c.verifyLeaseEnded(ctx, intent, "lease.abandon", "actor")
}

// expireSweep marks every active lease past its expiry as expired.
type expireSweep struct{}

func (expireSweep) spec() Spec {
	return Spec{
		ID:      actionid.ExpireSweep,
		Title:   "Run the expire sweep (every active lease past expiry → expired)",
		MinRole: RoleOperator,
		Tier:    TierGatedWrite,
	}
}

func (expireSweep) plan(ctx context.Context, c *Core, req Request) (*plan, error) {
	if r, err := c.schemaRefusal(ctx, leases.OpSweep); err != nil || r != nil {
		return &plan{refusal: r}, err
	}
	r, err := c.reader()
	if err != nil {
		return &plan{}, err
	}
	snap, err := r.Snapshot(ctx, leases.ReadOptions{RecentTerminal: -1})
	if err != nil {
		c.dropHandles()
		return &plan{}, err
	}
	if snap.LeasesHealth.Status != leaserec.HealthOK {
		return &plan{
			refusal: refuse(
				CodeSourceUnavailable,
				"the leases table is "+string(
					snap.LeasesHealth.Status,
				)+": "+strings.Join(
					snap.LeasesHealth.Reasons,
					"; ",
				)+". A sweep over a partial read could miss or misjudge leases; fix the DB first.",
			),
		}, nil
	}
	now := c.leaseNow(ctx)
	ids := leases.SweepCandidates(snap.Leases, now)
	sort.Strings(ids)
	p := &plan{state: ids}
	if len(ids) == 0 {
		p.refusal = refuse("nothing_to_do", "no active lease is past its expiry; nothing to sweep")
		return p, nil
	}
	var stamps []stamped
	for i := range snap.Leases {
		if slices.Contains(ids, snap.Leases[i].LeaseID) {
			stamps = append(stamps, leaseStamps(&snap.Leases[i])...)
		}
	}
	if p.refusal = c.clockRefusal(actionid.ExpireSweep, now, stamps...); p.refusal != nil {
		return p, nil
	}
	for _, id := range ids {
		p.effects = append(p.effects, "lease "+id+": active → expired (end_reason expire_sweep)")
	}
	p.fences = []string{
		fmt.Sprintf(
			"the same %d leases are past expiry when re-read; each is re-checked inside one BEGIN IMMEDIATE",
			len(ids),
		),
	}
	p.evidence = []string{
		fmt.Sprintf("%d active leases read, %d past expiry at %s", len(snap.Leases), len(ids), stamp(now)),
	}
	return p, nil
}

func (expireSweep) apply(ctx context.Context, c *Core, req Request, p *plan, attempt string) effect {
	s, err := c.store()
	if err != nil {
		return effect{err: err}
	}
	o, err := s.ExpireSweep(ctx, c.now())
	c.doStep("db-committed")
	if err != nil {
		return dbFailed(err)
	}
	if r := fromLeases(o); r != nil {
		return effect{refusal: r}
	}
	var eff []string
	for _, id := range o.Expired {
		eff = append(eff, "lease "+id+": active → expired")
	}
	return effect{effects: eff, detail: map[string]string{"expired": strings.Join(o.Expired, ",")}}
}

// verify settles a sweep from its lease.expire events: each names the attempt that wrote
// it (the sweep is one transaction, so one event of it proves all of it committed). None
// proves that it expired nothing — committed or not, nothing of it remains — where the
// DB's events can carry the mark at all.
func (expireSweep) verify(ctx context.Context, c *Core, intent Record) (Result, []string, bool) {
	r, err := c.reader()
	if err != nil {
		return "", []string{"DB unreadable: " + err.Error()}, false
	}
	if ok, err := r.HasColumn(ctx, "events", "detail_json"); err != nil {
		return "", []string{"DB unreadable: " + err.Error()}, false
	} else if !ok {
		return "", []string{"the DB's events carry no attempt mark, so the sweep's effect cannot be told from another's; " +
			"check `steward status` and resolve by hand"}, false
	}
	var ids []string
	for cursor := int64(0); ; {
		evs, _, err := r.EventsSince(ctx, cursor, 5000)
		if err != nil {
			return "", []string{"events unreadable: " + err.Error()}, false
		}
		for _, e := range evs {
			if e.EventType == "lease.expire" && fmt.Sprint(e.Detail[leaserec.DetailAttempt]) == intent.Attempt {
				ids = append(ids, fmt.Sprint(e.Detail["lease_id"]))
			}
		}
		if len(evs) < 5000 {
			break
		}
		cursor = evs[len(evs)-1].EventID
	}
	if len(ids) == 0 {
		return ResultFailed, []string{
			"no lease.expire event names this attempt: it expired no lease, so nothing of it remains",
		}, true
	}
	return ResultSucceeded, []string{
		fmt.Sprintf(
			"%d lease.expire events name this attempt (leases %s): its transaction committed",
			len(ids),
			strings.Join(ids, ", "),
		),
	}, true
}
