package model

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"steward/govern/actionid"
	"steward/leases/leaserec"
	"steward/locks/lockrec"
)

// env is what every unit's derivation shares: configuration and the health
// of the sources.
type env struct {
	cfg Config
	// remote is how Gitea's facts are joined with the items the other sources name.
	remote RemoteJoin
	locks  SourceHealth
	db     SourceHealth
	sect   DBSections
	gitea  SourceHealth
}

func (e *env) dbUsable() bool       { return e.db.Usable() }
func (e *env) leasesComplete() bool { return e.db.Usable() && !e.db.Partial && e.sect.Leases }
func (e *env) sessionsComplete() bool {
	return e.db.Usable() && !e.db.Partial && e.sect.Sessions
}
func (e *env) giteaUsable() bool { return e.gitea.Usable() }

// refusal is one claim.refused event, reduced.
type refusal struct {
	at                  time.Time
	requesting, holding string
	eventID             int64
}

// refLease is a lease named by a lock: found (obs), proven absent, or unknown.
type refLease struct {
	obs   *LeaseObs
	known bool
}

// unitIn is everything one item's derivation reads.
type unitIn struct {
	item     *Item
	locks    []*LockObs
	leases   []*LeaseObs
	refs     map[string]refLease
	sessions map[string]*SessionObs
	refused  []refusal
	fact     *GiteaFact
	// branchClaimed: a lock elsewhere names this PR's head branch.
	branchClaimed bool
	clarified     bool
	// claimedAs are the same repository, kind and number under other remote names that a
	// lease or a lock holds: the item is not free while they do (steward does not guess
	// whether they are one item).
	claimedAs []Item
}

// unitOut is what one item contributes to the snapshot.
type unitOut struct {
	claims     []*Claim
	orphans    []*Orphan
	contention []*Contention
	item       *ItemState
	next       time.Time
}

func ev(src Source, field, value string) Evidence {
	return Evidence{Source: src, Field: field, Value: value}
}

func (o *unitOut) deadline(t, now time.Time) {
	if t.After(now) && (o.next.IsZero() || t.Before(o.next)) {
		o.next = t
	}
}

func itemOfRef(w leaserec.WorkRef) *Item {
	if w.Number <= 0 {
		return nil
	}
	return &Item{Kind: string(w.Kind), Number: w.Number, Remote: w.Remote, Org: w.Org, Repo: w.Repo}
}

func itemOfKey(k lockrec.Key) *Item {
	return &Item{Kind: "issue", Number: k.Issue, Remote: k.Remote, Org: k.Org, Repo: k.Repo}
}

func leaseActive(l *leaserec.Lease) bool { return !l.Status.Terminal() }

func retire(name string) *ActionRef {
	return &ActionRef{ID: actionid.RetireLock, Target: ActionTarget{LockFile: name}}
}

func leaseAction(id, lease string) *ActionRef {
	return &ActionRef{ID: id, Target: ActionTarget{LeaseID: lease}}
}

// derive computes one item's claims, orphans, contention and traffic bucket
// at now. It is pure.
func derive(u *unitIn, e *env, now time.Time) unitOut {
	var out unitOut
	joined := map[string]bool{} // lock file names joined to a lease claim
	for _, lo := range u.leases {
		l := &lo.Lease
		if !leaseActive(l) {
			continue
		}
		pol, polWhy := e.cfg.Policies.ForLease(*l)
		evid := leaserec.Evidence{Owner: leaserec.ProcessState(lo.Owner), Worktree: leaserec.WorktreeState(lo.Worktree)}
		fr := leaserec.Classify(*l, pol, evid, now)
		out.deadline(fr.NextDeadline, now)
		if hb, ok := lastBeat(l); ok {
			out.deadline(hb.Add(pol.StaleWarning()), now)
		}
		lock := joinLock(u.locks, l)
		c := leaseClaim(u.item, lo, fr, pol, polWhy, lockEvidence(lock))
		if lock != nil {
			joined[lock.Entry.Name] = true
			addLockToClaim(c, lock, now)
			if o := expiryMismatch(u.item, lo, lock); o != nil {
				c.Evidence = append(c.Evidence, o.Evidence[len(o.Evidence)-1])
				out.orphans = append(out.orphans, o)
			}
		}
		out.claims = append(out.claims, c)
		out.orphans = append(out.orphans, leaseOrphans(u, lo, fr, pol, e, now, &out)...)
	}
	for _, lo := range u.locks {
		if lo.Entry.Unreadable != nil {
			out.orphans = append(out.orphans, unreadableOrphan(lo))
			continue
		}
		if !joined[lo.Entry.Name] {
			c := &Claim{
				Item:          u.item,
				OwnerLiveness: lo.Owner,
				SessionID:     lo.Entry.Record.OwnerSession,
				LeaseID:       lo.Entry.Record.LeaseID,
			}
			addLockToClaim(c, lo, now)
			out.claims = append(out.claims, c)
		}
		exp := lockrec.ExpirationOf(&lo.Entry.Record, now)
		if exp.State == lockrec.ExpirationRecorded {
			out.deadline(exp.Time, now)
		}
		out.orphans = append(out.orphans, lockOrphans(u.item, lo, now)...)
	}
	out.contention = contention(u, e, now, &out)
	out.orphans = append(out.orphans, giteaOrphans(u, e, now, &out)...)
	out.item = bucket(u, e, now)
	return out
}

// expirySkew is how far a lock's work_lease.expires_at may lie from its lease's before they
// are said to disagree: steward copies the lease's into the lock, the supervised system's
// tools compute each from the same policy a moment apart.
const expirySkew = time.Minute

// expiryMismatch is the lock-lease-expiry-mismatch orphan of an active lease and its joined
// lock when their expiries lie more than expirySkew apart (nil otherwise): a heartbeat that
// renewed the lease and failed to rewrite the lock (a full disk), or a writer that moves
// one of them alone. The lock is what every reader of the lock directory goes by — the
// supervised system's own tools among them — so a lock behind its lease reads expired
// while the lease is live, and one ahead of it stays live after the lease expired. The
// repair is the worker's next heartbeat, which renews the lease and rewrites the lock from
// it; steward has no action of its own that rewrites another worker's lock (it would move
// the lock_generation the worker's heartbeats are fenced on, and refuse them).
func expiryMismatch(it *Item, lo *LeaseObs, lock *LockObs) *Orphan {
	l, wl := &lo.Lease, lock.Entry.Record.WorkLease
	if !l.ExpiresAt.OK() || wl == nil || !wl.ExpiresAt.Valid {
		return nil
	}
	d := wl.ExpiresAt.Time.Sub(l.ExpiresAt.Time)
	if d >= -expirySkew && d <= expirySkew {
		return nil
	}
	how := "ahead of"
	if d < 0 {
		how, d = "behind", -d
	}
	o := &Orphan{
		Kind:      OrphanLockLeaseExpiryMismatch,
		Item:      it,
		LockFile:  lock.Entry.Name,
		LeaseID:   l.LeaseID,
		SessionID: l.SessionID,
		Evidence: []Evidence{
			ev(SourceDB, "leases.expires_at", l.ExpiresAt.Raw),
			ev(SourceDB, "leases.last_heartbeat_at", l.LastHeartbeatAt.Raw),
			ev(
				SourceLocks,
				"work_lease.expires_at",
				wl.ExpiresAt.Text,
			),
			ev(SourceLocks, "work_lease.last_heartbeat_at", wl.LastHeartbeatAt.Text),
			ev(
				SourceLocks,
				"expiry-mismatch",
				fmt.Sprintf("lock %s is %s %s its lease %s", lock.Entry.Name, Span(d), how, l.LeaseID),
			),
		},
	}
	o.InspectOnlyReason = "the lock and its lease disagree on when the claim expires (a heartbeat renewed one and not " +
		"the other — a lock write that failed, a full disk —, or a writer that moves only one). " +
		"Repair: the worker's next heartbeat (worker.heartbeat) renews the lease and rewrites the lock from it; make " +
		"room first if the lock directory's disk is full. " +
		"steward does not rewrite another worker's lock: that would move the lock_generation its heartbeats are fenced " +
		"on. If the worker has stopped, the lease expires and is reclaimed."
	return o
}

func lastBeat(l *leaserec.Lease) (time.Time, bool) {
	if l.LastHeartbeatAt.OK() {
		return l.LastHeartbeatAt.Time, true
	}
	if l.CreatedAt.OK() {
		return l.CreatedAt.Time, true
	}
	return time.Time{}, false
}

// joinLock finds the lock of a lease: the one naming its lease id, else the
// only lock of the item owned by the lease's session.
func joinLock(ls []*LockObs, l *leaserec.Lease) *LockObs {
	var bySession *LockObs
	for _, lo := range ls {
		if lo.Entry.Unreadable != nil {
			continue
		}
		switch JoinOf(&lo.Entry.Record, l) {
		case JoinByLeaseID:
			return lo
		case JoinBySession:
			if bySession == nil {
				bySession = lo
			}
		}
	}
	return bySession
}

// Join says how a lock record of an item belongs to one of the item's leases.
type Join int

// The joins, weakest first.
const (
	JoinNone      Join = iota
	JoinBySession      // the lock names no lease and the lease's session owns it
	JoinByLeaseID      // the lock names the lease
)

// JoinOf is the rule the live model joins a lock of an item to a lease of the same item
// with; the governed core's guards use it too, so that what the screen shows as one
// claim is one claim to the core.
func JoinOf(rec *lockrec.Record, l *leaserec.Lease) Join {
	switch {
	case rec.LeaseID != "" && rec.LeaseID == l.LeaseID:
		return JoinByLeaseID
	case rec.LeaseID == "" && rec.OwnerSession != "" && rec.OwnerSession == l.SessionID:
		return JoinBySession
	}
	return JoinNone
}

// lockEvidence is how many evidence lines addLockToClaim adds for lo (none for nil).
func lockEvidence(lo *LockObs) int {
	if lo == nil {
		return 0
	}
	return 4 + len(lo.Entry.Findings)
}

// leaseClaim is a lease's claim; its evidence has room for more lines (a joined lock's)
// without growing: an evidence slice grown by append kept up to half of it unused, and
// the old array as garbage, for every claim.
func leaseClaim(it *Item, lo *LeaseObs, fr leaserec.FreshnessResult, pol leaserec.Policy, polWhy string,
	more int) *Claim {
	l := &lo.Lease
	c := &Claim{Item: it, Role: l.Role, TaskClass: string(pol.TaskClass), SessionID: l.SessionID, Phase: l.Phase,
		Freshness: string(
			fr.Value,
		), Warning: fr.Warning, OwnerLiveness: lo.Owner, LeaseID: l.LeaseID, LeaseStatus: string(l.Status)}
	if lo.OtherHost {
		c.OwnerOtherHost = lo.Host
	}
	if l.HasGeneration {
		g := l.Generation
		c.LeaseGeneration = &g
	}
	if l.LastHeartbeatAt.OK() {
		c.LastHeartbeat = l.LastHeartbeatAt.Time
	}
	if l.ExpiresAt.OK() {
		c.ExpiresAt = l.ExpiresAt.Time
	}
	c.Evidence = make([]Evidence, 0, 6+len(fr.Reasons)+len(l.Problems)+more)
	c.Evidence = append(c.Evidence, ev(SourceDB, "leases.status", l.StatusText()),
		ev(SourceDB, "leases.expires_at", l.ExpiresAt.Raw), ev(SourceDB, "freshness", string(fr.Value)),
		ev(SourceDB, "policy", string(pol.TaskClass)+": "+polWhy),
		ev(SourceDB, "owner", fmt.Sprintf("pid %d on %q: %s (%s)", l.OwnerPID, lo.Host, lo.Owner, lo.OwnerWhy)),
		ev(SourceDB, "worktree", l.WorktreePath+": "+string(lo.Worktree)+" ("+lo.WorkWhy+")"))
	for _, r := range fr.Reasons {
		c.Evidence = append(c.Evidence, ev(SourceDB, "freshness.reason", r))
	}
	c.Evidence = append(c.Evidence, rowProblems(l)...)
	return c
}

// unproven lists, as evidence, what the DB reader could not decode in the item's
// non-terminal lease rows. Those rows still hold the item and show as claims, but the
// item's verdicts that would rest on them — orphan-lease, lock-lease-mismatch — are
// withheld as unproven, for this item only (partiality is scoped to the row).
func unproven(u *unitIn) []Evidence {
	var out []Evidence
	for _, lo := range u.leases {
		l := &lo.Lease
		if leaseActive(l) && len(l.Problems) > 0 {
			out = append(out, ev(SourceDB, "unproven", "lease "+l.LeaseID+": "+strings.Join(l.Problems, "; ")))
		}
	}
	return out
}

// rowProblems names what the DB reader could not decode in a lease row (an expiry that
// is not a timestamp, a pid that is not an integer, provenance that is not JSON), so the
// section's "rows with undecodable values" says which row and why.
func rowProblems(l *leaserec.Lease) []Evidence {
	out := make([]Evidence, 0, len(l.Problems))
	for _, p := range l.Problems {
		out = append(out, ev(SourceDB, "leases.problem", p))
	}
	return out
}

func addLockToClaim(c *Claim, lo *LockObs, now time.Time) {
	rec := &lo.Entry.Record
	a := lockrec.Assess(rec, now)
	c.LockFile = lo.Entry.Name
	c.Contract = string(a.Contract)
	if a.Claimant.Username != "" || a.Claimant.Profile != "" {
		c.Claimant = &Claimant{Username: a.Claimant.Username, Profile: a.Claimant.Profile}
	}
	// A claim no lease row backs (LeaseStatus unset: the lock names no lease, or one the
	// DB does not hold) shows the lock's own expiry and heartbeat.
	if c.LeaseStatus == "" && c.ExpiresAt.IsZero() && rec.WorkLease != nil {
		if rec.WorkLease.ExpiresAt.Valid {
			c.ExpiresAt = rec.WorkLease.ExpiresAt.Time
		}
		if rec.WorkLease.LastHeartbeatAt.Valid {
			c.LastHeartbeat = rec.WorkLease.LastHeartbeatAt.Time
		}
		if a.Expiration.Expired != nil {
			c.Freshness = map[bool]string{true: "expired", false: "active"}[*a.Expiration.Expired]
		}
		c.Role = rec.WorkLease.OperationType
	}
	if c.SessionID == "" {
		c.SessionID = rec.OwnerSession
	}
	if c.OwnerLiveness == "" || c.OwnerLiveness == LivenessUnknown {
		c.OwnerLiveness = lo.Owner
	}
	if c.OwnerOtherHost == "" && lo.OtherHost && c.OwnerLiveness == LivenessUnknown {
		c.OwnerOtherHost = lo.Host
	}
	c.Evidence = slices.Grow(c.Evidence, lockEvidence(lo))
	c.Evidence = append(c.Evidence, ev(SourceLocks, "contract", string(a.Contract)),
		ev(SourceLocks, "work_lease.expires_at", a.Expiration.ExpiresAt+" ("+string(a.Expiration.State)+")"),
		ev(SourceLocks, "owner", fmt.Sprintf("pid %d on %q: %s (%s)", lo.PID, lo.Host, lo.Owner, lo.OwnerWhy)),
		ev(SourceLocks, "worktree", string(lo.Worktree)+" ("+lo.WorkWhy+")"))
	c.Evidence = append(c.Evidence, decodeEvidence(&lo.Entry)...)
}

// decodeEvidence names every problem the lock decoder found in a readable lock (a
// duplicate key whose earlier value was dropped, a wrongly typed field kept raw, a
// timestamp that is not RFC 3339 UTC, a number out of range), so that none is resolved
// silently. Missing fields are left out: the contract's missing_fields names them.
func decodeEvidence(e *lockrec.Entry) []Evidence {
	var out []Evidence
	for _, f := range e.Findings {
		if f.Kind == lockrec.FindingMissing {
			continue
		}
		v := f.Detail
		if f.Path != "" {
			v = f.Path + ": " + v
		}
		out = append(out, ev(SourceLocks, "decode."+string(f.Kind), v))
	}
	return out
}

func unreadableOrphan(lo *LockObs) *Orphan {
	u := lo.Entry.Unreadable
	o := &Orphan{Kind: OrphanUnreadableLock, LockFile: lo.Entry.Name,
		Evidence: []Evidence{ev(SourceLocks, "unreadable", string(u.Reason)+": "+u.Detail)},
		InspectOnlyReason: "the file is not a readable lock record, so it has no fence; steward will not move it. " +
			"Inspect it and repair or remove it by hand."}
	if lo.Entry.HasKey {
		o.Item = itemOfKey(lo.Entry.Key)
	}
	return o
}

// lockOrphans classifies one readable live lock file.
func lockOrphans(it *Item, lo *LockObs, now time.Time) []*Orphan {
	rec := &lo.Entry.Record
	a := lockrec.Assess(rec, now)
	name := lo.Entry.Name
	base := []Evidence{ev(SourceLocks, "contract", string(a.Contract)),
		ev(SourceLocks, "work_lease.expires_at", a.Expiration.ExpiresAt+" ("+string(a.Expiration.State)+")"),
		ev(SourceLocks, "owner", fmt.Sprintf("pid %d on %q: %s (%s)", lo.PID, lo.Host, lo.Owner, lo.OwnerWhy))}
	base = append(base, decodeEvidence(&lo.Entry)...)
	mk := func(k OrphanKind, extra ...Evidence) *Orphan {
		evs := append(append([]Evidence{}, base...), extra...)
		return &Orphan{Kind: k, Item: it, LockFile: name, SessionID: rec.OwnerSession, LeaseID: rec.LeaseID, Evidence: evs}
	}
	var out []*Orphan
	switch a.Contract {
	case lockrec.ContractLegacy:
		o := mk(OrphanLegacyLock, ev(SourceLocks, "claimant_placement", string(a.ClaimantPlacement)))
		o.InspectOnlyReason = "a legacy (pre-#953) lock: upgrade it through the supervised system's bootstrap lock " +
			"recovery; steward has no upgrade action"
		out = append(out, o)
	case lockrec.ContractIncomplete, lockrec.ContractAbsent:
		o := mk(OrphanIncompleteLock)
		for _, m := range a.MissingFields {
			o.Evidence = append(o.Evidence, ev(SourceLocks, "missing_fields", m))
		}
		o.InspectOnlyReason = "the lock lacks canonical fields; repair it through the supervised system's bootstrap lock " +
			"recovery (steward does not rewrite another tool's lock)"
		out = append(out, o)
	}
	dead, alive := lo.Owner == LivenessDead, lo.Owner == LivenessAlive
	expired := a.Expiration.Expired != nil && *a.Expiration.Expired
	var life *Orphan
	switch {
	case a.Expiration.State != lockrec.ExpirationRecorded:
		life = mk(OrphanLockNeverExpires)
		if dead {
			life.Action = retire(name)
		} else {
			life.InspectOnlyReason = "no usable expiry and the owner is " + string(lo.Owner) + ", not proven dead; a " +
				"missing expiry is never read as expired. Recover it through bootstrap lock recovery, or retire it once the " +
				"owner is gone."
		}
	case expired && alive:
		life = mk(OrphanExpiredLockLiveOwner)
		life.InspectOnlyReason = "the lock expired but its owner process is alive and may heartbeat again; ask the owner " +
			"to release or re-lock, or wait until the process ends"
	case expired && dead:
		life = mk(OrphanStaleLockDeadOwner)
		life.Action = retire(name)
	case !expired && dead:
		life = mk(OrphanLiveLockDeadOwner)
		life.Action = retire(name)
	}
	wt := ev(SourceLocks, "worktree_path", rec.WorktreePath+": "+string(lo.Worktree)+" ("+lo.WorkWhy+")")
	switch {
	case life != nil && lo.Worktree == WorktreeMissing:
		life.Evidence = append(life.Evidence, wt)
	case lo.Worktree == WorktreeMissing:
		life = mk(OrphanLockWithoutWorktree, wt)
		if expired || dead {
			life.Action = retire(name)
		} else {
			life.InspectOnlyReason = "the worktree is gone but the lock is live and its owner is " + string(lo.Owner) + ", " +
				"not proven dead; a live lock is never retired. Wait for expiry."
		}
	}
	if life != nil {
		out = append(out, life)
	}
	return out
}

// leaseOrphans classifies one non-terminal lease: at most one lease kind, plus
// a pending handoff.
func leaseOrphans(u *unitIn, lo *LeaseObs, fr leaserec.FreshnessResult, pol leaserec.Policy, e *env,
	now time.Time, out *unitOut) []*Orphan {
	l := &lo.Lease
	base := []Evidence{ev(SourceDB, "leases.status", l.StatusText()), ev(SourceDB, "leases.expires_at", l.ExpiresAt.Raw),
		ev(SourceDB, "freshness", string(fr.Value)),
		ev(SourceDB, "owner", fmt.Sprintf("pid %d on %q: %s (%s)", l.OwnerPID, lo.Host, lo.Owner, lo.OwnerWhy))}
	base = append(base, rowProblems(l)...)
	mk := func(k OrphanKind, act *ActionRef, extra ...Evidence) *Orphan {
		return &Orphan{Kind: k, Item: u.item, LeaseID: l.LeaseID, SessionID: l.SessionID,
			Evidence: append(append([]Evidence{}, base...), extra...), Action: act}
	}
	var res []*Orphan
	handoff := pendingHandoff(l)
	switch fr.Value {
	case leaserec.FreshExpired:
		o := mk(OrphanActiveLeasePastExpiry, leaseAction(actionid.ReclaimExpired, l.LeaseID))
		if handoff {
			o.Evidence = append(o.Evidence, ev(SourceDB, "provenance_json.cross_role_handoff", "pending, never adopted"))
		}
		return append(res, o)
	case leaserec.FreshStaleDeadProcess:
		res = append(res, mk(OrphanStaleLeaseDeadOwner, leaseAction(actionid.AbandonStale, l.LeaseID)))
	case leaserec.FreshStaleMissingWorktree:
		res = append(res, mk(OrphanStaleLeaseMissingWorktree, leaseAction(actionid.AbandonStale, l.LeaseID),
			ev(SourceDB, "leases.worktree_path", l.WorktreePath+": "+lo.WorkWhy)))
	default:
		if len(l.Problems) > 0 {
			// A whole-DB verdict on a row that could not be read entirely: unproven here,
			// and only here (the item says so; every other item is judged as usual).
			break
		}
		if e.sessionsComplete() {
			s, ok := u.sessions[l.SessionID]
			switch {
			case !ok:
				res = append(
					res,
					mk(
						OrphanLease,
						leaseAction(actionid.AbandonStale, l.LeaseID),
						ev(SourceDB, "sessions", "no session row "+strconv.Quote(l.SessionID)),
					),
				)
			case !leaserec.SessionActive(s.Session.Status) || s.Session.EndedAt.OK():
				res = append(res, mk(OrphanLease, leaseAction(actionid.AbandonStale, l.LeaseID),
					ev(SourceDB, "sessions.status", s.Session.Status), ev(SourceDB, "sessions.ended_at", s.Session.EndedAt.Raw)))
			}
		}
	}
	if handoff && l.CreatedAt.OK() {
		due := l.CreatedAt.Time.Add(pol.RecoveryGrace())
		if !now.Before(due) {
			o := mk(
				OrphanPendingHandoffUnconsumed,
				nil,
				ev(SourceDB, "provenance_json.cross_role_handoff", "pending; no adopted_by_session_id"),
				ev(SourceDB, "leases.created_at", l.CreatedAt.Raw+" (recovery grace "+pol.RecoveryGrace().String()+" passed)"),
			)
			o.InspectOnlyReason = "a cross-role handoff nobody adopted; a worker of the required role adopts it with its " +
				"role tools (steward never assigns work). Reclaim it once it expires."
			res = append(res, o)
		} else {
			out.deadline(due, now)
		}
	}
	return res
}

// pendingHandoff is the seed's is_pending_cross_role_handoff (§3.5).
func pendingHandoff(l *leaserec.Lease) bool {
	if l.Provenance == nil || l.AdoptedBySessionID != "" {
		return false
	}
	if v, ok := l.Provenance["cross_role_handoff"]; !ok || v == nil || v == false || v == "" {
		return false
	}
	if st, ok := l.Provenance["handoff_status"].(string); ok && st != "" && st != "pending" {
		return false
	}
	rr, _ := l.Provenance["required_role"].(string)
	return rr != "" || l.Role != ""
}

func sortedSessions(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for s := range m {
		if s != "" {
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}
