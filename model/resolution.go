package model

import (
	"fmt"
	"slices"
	"strings"
)

// Resolution is the way out of a contention entry: the sanctioned actions that resolve it
// where one applies (the same actions, on the same targets, as the orphans of the claims
// involved), else whose job it is and what to do, and why steward will not act. Every
// contention entry carries one (`next` in `steward status --json`); the workbench shows it
// in the inbox row, on `a` and in the detail, and docs/recovery.md has a runbook per kind.
type Resolution struct {
	// Who does it: "operator" (a steward action an operator applies), "workers" (whoever
	// runs the workers: steward will not pick a winner), "none" (nothing to do).
	Who string `json:"who"`
	// Say is one plain sentence: what to do, and why steward will or will not act.
	Say string `json:"say"`
	// Actions are the sanctioned actions that resolve it, each on its losing claim (empty
	// when steward has none to offer). Allowed and Refusal are filled in like an orphan's.
	Actions []ActionRef `json:"actions,omitempty"`
	// Runbook names the docs/recovery.md section for the kind.
	Runbook string `json:"runbook"`
}

// Who does a Resolution.
const (
	ResolveOperator = "operator"
	ResolveWorkers  = "workers"
	resolveNone     = "none"
)

// RunbookOf is the docs/recovery.md anchor of a contention kind's runbook.
func RunbookOf(k ContentionKind) string { return "docs/recovery.md#contention-" + string(k) }

// claimOwner is one claim of a collision: who holds it (its session, else — a legacy lock
// has no owner_session — its process), whether that owner is proven dead, and the
// sanctioned actions of the orphans on its lock file or lease.
type claimOwner struct {
	label   string
	live    Liveness
	actions []ActionRef
}

// ownerOfLock is a lock file's owner in a collision.
func ownerOfLock(lo *LockObs, orphans []*Orphan) claimOwner {
	rec := &lo.Entry.Record
	label := rec.OwnerSession
	if label == "" {
		label = fmt.Sprintf("pid %d (%s: no owner_session)", lo.PID, lo.Entry.Name)
	}
	live := lo.Owner
	if lo.OtherHost {
		live = LivenessUnknown
	}
	return claimOwner{label: label, live: live, actions: actionsOn(orphans, "", lo.Entry.Name)}
}

// ownerOfLease is a lease's owner in a collision.
func ownerOfLease(lo *LeaseObs, orphans []*Orphan) claimOwner {
	live := lo.Owner
	if lo.OtherHost {
		live = LivenessUnknown
	}
	return claimOwner{label: lo.Lease.SessionID, live: live, actions: actionsOn(orphans, lo.Lease.LeaseID, "")}
}

// actionsOn are the sanctioned actions of the orphans on lease or lock file.
func actionsOn(orphans []*Orphan, lease, file string) []ActionRef {
	var out []ActionRef
	for _, o := range orphans {
		if o.Action == nil {
			continue
		}
		if (lease != "" && o.Action.Target.LeaseID == lease) || (file != "" && o.Action.Target.LockFile == file) {
			if !slices.ContainsFunc(out, func(a ActionRef) bool { return a.ID == o.Action.ID && a.Target == o.Action.Target }) {
				out = append(out, *o.Action)
			}
		}
	}
	return out
}

// resolveCollision is the resolution of a collision between owners: the owners whose
// claims a sanctioned action ends (a dead owner, an expired or stale lease) lose, and the
// actions are the way out; when every owner is alive, or not proven dead, steward will not
// pick a winner and says who must.
func resolveCollision(k ContentionKind, owners []claimOwner, what string) *Resolution {
	r := &Resolution{Runbook: RunbookOf(k)}
	var losers, alive, unknown []string
	for _, o := range owners {
		switch {
		case len(o.actions) > 0:
			losers = append(losers, o.label)
			r.Actions = append(r.Actions, o.actions...)
		case o.live == LivenessAlive:
			alive = append(alive, o.label)
		default:
			unknown = append(unknown, o.label)
		}
	}
	keeps := append(append([]string(nil), alive...), unknown...)
	switch {
	case len(r.Actions) > 0 && len(keeps) > 0:
		r.Who = ResolveOperator
		r.Say = fmt.Sprintf("end the losing %s of %s (its owner is dead or its claim has run out) with %s; %s keeps the item",
			what, strings.Join(losers, ", "), actionNames(r.Actions), strings.Join(keeps, ", "))
	case len(r.Actions) > 0:
		r.Who = ResolveOperator
		r.Say = fmt.Sprintf("no owner is left alive: end every %s (%s) with %s, or recover the item; it returns to the pool",
			what, strings.Join(losers, ", "), actionNames(r.Actions))
	case len(unknown) > 0:
		r.Who = ResolveWorkers
		r.Say = fmt.Sprintf(
			"%s: not proven dead (a process on another host, or not observed), so steward will not pick a winner. Whoever "+
				"runs the workers checks them and stops one; once its process has ended, its %s is ended here",
			strings.Join(unknown, ", "),
			what,
		)
		if len(alive) > 0 {
			r.Say = strings.Join(alive, ", ") + " alive and " + r.Say
		}
	default:
		both := "both owners are alive"
		if len(alive) != 2 {
			both = fmt.Sprintf("all %d owners are alive", len(alive))
		}
		r.Who = ResolveWorkers
		r.Say = fmt.Sprintf(
			both+" (%s): steward will not pick a winner. Whoever runs the workers stops one of them (its worker releases "+
				"its claim); once its process has ended, its %s is ended here",
			strings.Join(alive, ", "),
			what,
		)
	}
	return r
}

func actionNames(as []ActionRef) string {
	var ids []string
	for _, a := range as {
		if !slices.Contains(ids, a.ID) {
			ids = append(ids, a.ID)
		}
	}
	return strings.Join(ids, " / ")
}

// resolve gives every contention entry of one item its resolution and, for a collision,
// its count: one per claim involved (a lock file, a lease), a legacy lock's owner
// included — never 0.
func resolve(u *unitIn, cs []*Contention, orphans []*Orphan) {
	lockBy := map[string]*LockObs{}
	for _, lo := range u.locks {
		lockBy[lo.Entry.Name] = lo
	}
	leaseBy := map[string]*LeaseObs{}
	for _, lo := range u.leases {
		leaseBy[lo.Lease.LeaseID] = lo
	}
	for _, c := range cs {
		var owners []claimOwner
		for _, f := range c.LockFiles {
			if lo := lockBy[f]; lo != nil {
				owners = append(owners, ownerOfLock(lo, orphans))
			}
		}
		for _, id := range c.LeaseIDs {
			if lo := leaseBy[id]; lo != nil {
				owners = append(owners, ownerOfLease(lo, orphans))
			}
		}
		switch c.Kind {
		case ContentionClaimRefused:
			c.Next = &Resolution{Who: resolveNone, Runbook: RunbookOf(c.Kind),
				Say: "nothing to do: the control plane refused the later claims and the holder keeps the item; refusals that " +
					"go on from one session mean its worker retries in a loop — look at that session"}
			continue
		case ContentionDuplicateLiveLock:
			c.Next = resolveCollision(c.Kind, owners, "lock")
		case ContentionConcurrentActiveLease:
			c.Next = resolveCollision(c.Kind, owners, "lease")
		case ContentionLockLeaseMismatch:
			c.Next = resolveMismatch(c, owners)
		}
		c.Owners = make([]string, len(owners))
		for i, o := range owners {
			c.Owners[i] = o.label
		}
		c.Count = len(owners)
	}
}

// resolveMismatch is a lock-lease-mismatch's resolution: the sanctioned actions on the lock
// or the lease (a dead owner's lock retired, an expired lease reclaimed), else the owners'
// job — steward does not rewrite another worker's lock.
func resolveMismatch(c *Contention, owners []claimOwner) *Resolution {
	r := &Resolution{Runbook: RunbookOf(c.Kind)}
	var labels []string
	for _, o := range owners {
		r.Actions = append(r.Actions, o.actions...)
		if !slices.Contains(labels, o.label) {
			labels = append(labels, o.label)
		}
	}
	if len(r.Actions) > 0 {
		r.Who = ResolveOperator
		r.Say = "end the claim whose owner is gone with " + actionNames(
			r.Actions,
		) + "; the lock and the lease then agree again"
		return r
	}
	r.Who = ResolveWorkers
	r.Say = "the lock and the control-plane DB disagree on this claim and its owner (" + strings.Join(labels, ", ") +
		") is not proven dead: steward does not rewrite another worker's lock. Whoever runs the workers has the owner " +
		"release or re-claim the item with its own tools; once its process has ended, the lock is retired here"
	return r
}
