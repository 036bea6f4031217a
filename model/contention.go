package model

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"steward/leases/leaserec"
	"steward/locks/lockrec"
)

// orUnrecorded is a session id for an evidence line: one an event does not name is said to
// be unrecorded, never left blank.
func orUnrecorded(session string) string {
	if session == "" {
		return "(session not recorded)"
	}
	return session
}

// contention finds refused claims over the window and the three collisions.
func contention(u *unitIn, e *env, now time.Time, out *unitOut) []*Contention {
	var res []*Contention
	// claim-refused: per item over the window.
	if len(u.refused) > 0 {
		from := now.Add(-e.cfg.RefusedWindow)
		ss := map[string]bool{}
		n := 0
		var evs []Evidence
		var oldest time.Time
		for _, r := range u.refused {
			if r.at.Before(from) || r.at.After(now) {
				continue
			}
			n++
			ss[r.requesting], ss[r.holding] = true, true
			if oldest.IsZero() || r.at.Before(oldest) {
				oldest = r.at
			}
			if len(evs) < 10 {
				v := fmt.Sprintf("cp:%d %s refused, held by %s", r.eventID, orUnrecorded(r.requesting),
					orUnrecorded(r.holding))
				if r.requesting == "" && r.holding == "" {
					// The seed's events table records no session (seed §2.2 digest).
					v = fmt.Sprintf("cp:%d claim refused (sessions not recorded: the event names no session)", r.eventID)
				}
				evs = append(evs, Evidence{Source: SourceDB, Field: "events.claim.refused", At: r.at, Value: v})
			}
		}
		if n > 0 {
			out.deadline(oldest.Add(e.cfg.RefusedWindow), now)
			res = append(res, &Contention{Kind: ContentionClaimRefused, Item: u.item, Sessions: sortedSessions(ss),
				Count: n, WindowS: int64(e.cfg.RefusedWindow / time.Second), Evidence: evs})
		}
	}
	// duplicate-live-lock: two live files with the same identity.
	var readable []*LockObs
	for _, lo := range u.locks {
		if lo.Entry.Unreadable == nil && lo.Entry.HasKey {
			readable = append(readable, lo)
		}
	}
	if len(readable) > 1 {
		c := &Contention{Kind: ContentionDuplicateLiveLock, Item: u.item}
		ss := map[string]bool{}
		for _, lo := range readable {
			ss[lo.Entry.Record.OwnerSession] = true
			c.LockFiles = append(c.LockFiles, lo.Entry.Name)
			c.Evidence = append(
				c.Evidence,
				ev(
					SourceLocks,
					lo.Entry.Name,
					"owner_session "+strconv.Quote(
						lo.Entry.Record.OwnerSession,
					)+", task_session_id "+strconv.Quote(
						lo.Entry.Record.TaskSessionID(),
					),
				),
			)
		}
		c.Sessions = sortedSessions(ss)
		res = append(res, c)
	}
	// concurrent-active-lease: two active leases on one item.
	var active []*LeaseObs
	for _, lo := range u.leases {
		if lo.Lease.Status == leaserec.StatusActive {
			active = append(active, lo)
		}
	}
	if len(active) > 1 {
		c := &Contention{Kind: ContentionConcurrentActiveLease, Item: u.item}
		ss := map[string]bool{}
		for _, lo := range active {
			ss[lo.Lease.SessionID] = true
			c.LeaseIDs = append(c.LeaseIDs, lo.Lease.LeaseID)
			c.Evidence = append(
				c.Evidence,
				ev(
					SourceDB,
					"leases."+lo.Lease.LeaseID,
					"active, session "+lo.Lease.SessionID+", expires_at "+lo.Lease.ExpiresAt.Raw,
				),
			)
		}
		c.Sessions = sortedSessions(ss)
		res = append(res, c)
	}
	// lock-lease-mismatch: the lock names one owner, the DB another. Withheld for an item
	// one of whose lease rows could not be decoded (unproven).
	if e.dbUsable() && e.sect.Leases && len(unproven(u)) == 0 {
		for _, lo := range readable {
			if c := mismatch(u, lo, active, e, now); c != nil {
				res = append(res, c)
			}
		}
	}
	resolve(u, res, out.orphans)
	return res
}

func mismatch(u *unitIn, lo *LockObs, active []*LeaseObs, e *env, now time.Time) *Contention {
	rec := &lo.Entry.Record
	mk := func(why string, l *leaserec.Lease) *Contention {
		c := &Contention{Kind: ContentionLockLeaseMismatch, Item: u.item, LockFiles: []string{lo.Entry.Name},
			Evidence: []Evidence{
				ev(SourceLocks, "owner_session", rec.OwnerSession),
				ev(SourceLocks, "lease_id", rec.LeaseID),
				ev(SourceDB, "mismatch", why),
			}}
		ss := map[string]bool{rec.OwnerSession: true}
		if l != nil {
			ss[l.SessionID] = true
			c.LeaseIDs = []string{l.LeaseID}
		}
		c.Sessions = sortedSessions(ss)
		return c
	}
	if rec.LeaseID != "" {
		var l *leaserec.Lease
		for _, x := range u.leases {
			if x.Lease.LeaseID == rec.LeaseID {
				l = &x.Lease
			}
		}
		if l == nil {
			r, ok := u.refs[rec.LeaseID]
			switch {
			case ok && r.obs != nil:
				l = &r.obs.Lease
			case ok && r.known && e.leasesComplete():
				return mk("the lock names lease "+rec.LeaseID+", which is not in the control-plane DB", nil)
			default:
				return nil // cannot be read: no conclusion
			}
		}
		if rec.OwnerSession != "" && l.SessionID != rec.OwnerSession {
			return mk("lease "+l.LeaseID+" is held by session "+l.SessionID+", the lock says "+rec.OwnerSession, l)
		}
		if it := itemOfRef(l.Work); it != nil && u.item != nil && it.key() != u.item.key() {
			return mk("lease "+l.LeaseID+" is on "+it.String()+", the lock is for "+u.item.String(), l)
		}
		exp := lockrec.ExpirationOf(rec, now)
		if l.Status.Terminal() && exp.Expired != nil && !*exp.Expired {
			return mk("the lock is live until "+exp.ExpiresAt+" but its lease "+l.LeaseID+" is "+string(l.Status), l)
		}
	}
	for _, a := range active {
		if a.Lease.LeaseID == rec.LeaseID {
			continue
		}
		if rec.LeaseID != "" || (rec.OwnerSession != "" && a.Lease.SessionID != rec.OwnerSession) {
			return mk(
				"the item's active lease "+a.Lease.LeaseID+" (session "+a.Lease.SessionID+") is not the one the lock names",
				&a.Lease,
			)
		}
	}
	return nil
}

// liveClaim reports whether the item has any claim: a non-terminal lease or a
// readable live lock file.
func liveClaim(u *unitIn) bool {
	for _, l := range u.leases {
		if leaseActive(&l.Lease) {
			return true
		}
	}
	for _, lo := range u.locks {
		if lo.Entry.Unreadable == nil {
			return true
		}
	}
	return false
}

func claimSessions(u *unitIn) (string, string, string) {
	for _, l := range u.leases {
		if leaseActive(&l.Lease) {
			return l.Lease.SessionID, l.Lease.LeaseID, ""
		}
	}
	for _, lo := range u.locks {
		if lo.Entry.Unreadable == nil {
			return lo.Entry.Record.OwnerSession, lo.Entry.Record.LeaseID, lo.Entry.Name
		}
	}
	return "", "", ""
}

// giteaOrphans: claims on merged or closed items, and quiet open PRs nobody
// claims. Only from a Gitea read that worked; stale-pr-no-claim needs every
// source complete, because it rests on an absence.
func giteaOrphans(u *unitIn, e *env, now time.Time, out *unitOut) []*Orphan {
	f := u.fact
	if f == nil || !f.Found || !e.giteaUsable() {
		return nil
	}
	live := liveClaim(u)
	sess, lease, lock := claimSessions(u)
	gev := []Evidence{
		ev(SourceGitea, "state", f.State),
		{Source: SourceGitea, Field: "updated_at", Value: f.UpdatedAt.UTC().Format(time.RFC3339), At: f.UpdatedAt},
	}
	mk := func(k OrphanKind, why string) *Orphan {
		return &Orphan{
			Kind:              k,
			Item:              u.item,
			SessionID:         sess,
			LeaseID:           lease,
			LockFile:          lock,
			Evidence:          gev,
			InspectOnlyReason: why,
		}
	}
	switch {
	case live && f.Item.Kind == "pr" && f.Merged:
		gev = append(gev, ev(SourceGitea, "merged", "true"))
		return []*Orphan{
			mk(
				OrphanMergedPRLiveClaim,
				"the PR is merged but a claim is still held; the holder releases it, or it is reclaimed once expired (no "+
					"governed Gitea reconcile action exists yet)",
			),
		}
	case live && f.State == "closed":
		return []*Orphan{
			mk(
				OrphanClosedIssueLiveClaim,
				"the item is closed but a claim is still held; the holder releases it, or it is reclaimed once expired (no "+
					"governed Gitea reconcile action exists yet)",
			),
		}
	case f.Item.Kind == "pr" && f.State == "open" && !live && !u.branchClaimed:
		if !e.gitea.Complete() || !e.locks.Complete() || !e.leasesComplete() {
			return nil
		}
		due := f.UpdatedAt.Add(e.cfg.StalePRQuiet)
		if now.Before(due) {
			out.deadline(due, now)
			return nil
		}
		gev = append(
			gev,
			ev(SourceLocks, "claims", "no lock names the item or its head branch "+strconv.Quote(f.HeadBranch)),
			ev(SourceDB, "leases", "no active lease on the item"),
		)
		return []*Orphan{
			mk(
				OrphanStalePRNoClaim,
				"an open PR nobody claims, quiet for over "+e.cfg.StalePRQuiet.String()+"; a worker picks it up by itself "+
					"(steward never assigns work), or a maintainer closes it",
			),
		}
	}
	return nil
}

// bucket places the item in one traffic bucket (seed §8.2), with the evidence of that
// bucket. Runnable rests on absences, so it needs every source complete; otherwise the
// bucket is unknown.
func bucket(u *unitIn, e *env, now time.Time) *ItemState {
	if u.item == nil {
		return nil
	}
	// The evidence is sized to what it holds (every item of the fleet keeps its state): an
	// array with room to spare cost as much again as the lines in it.
	st := &ItemState{Item: *u.item, Evidence: []Evidence{}}
	f := u.fact
	if f != nil {
		st.Title = f.Title
		st.Evidence = append(
			st.Evidence,
			ev(SourceGitea, "state", giteaState(f)),
			ev(SourceGitea, "labels", fmt.Sprint(f.Labels)),
		)
	}
	set := func(b Bucket, why string, evs ...Evidence) *ItemState {
		st.Bucket = b
		st.Reasons = append(st.Reasons, why)
		if n := len(st.Evidence) + len(evs); n > cap(st.Evidence) {
			st.Evidence = append(make([]Evidence, 0, n), st.Evidence...)
		}
		st.Evidence = append(st.Evidence, evs...)
		return st
	}
	if un := unproven(u); len(un) > 0 {
		st.Reasons = append(
			st.Reasons,
			"unproven: a lease row on the item has undecodable values; orphan-lease and lock-lease-mismatch are not "+
				"concluded for it",
		)
		st.Evidence = append(st.Evidence, un...)
	}
	switch {
	case f != nil && f.Found && (f.State == "closed" || f.Merged):
		return set(
			BucketTerminalComplete,
			"the item is "+map[bool]string{true: "merged", false: "closed"}[f.Merged],
			holders(u)...)
	case f != nil && slices.Contains(f.Labels, e.cfg.BlockedLabel):
		return set(BucketNeedsController, "label "+e.cfg.BlockedLabel, holders(u)...)
	case u.clarified:
		return set(BucketBlocked, "blocked pending clarification (marker label)", holders(u)...)
	case liveClaim(u):
		return set(BucketLeased, "an active lease or a live lock holds the item", holders(u)...)
	case len(u.claimedAs) > 0:
		var evs []Evidence
		for _, it := range u.claimedAs {
			evs = append(evs, ev(SourceDB, "claimed_as", it.Remote+" "+it.String()))
		}
		return set(
			BucketUnknown,
			"a lease or lock holds the same number of this repository under another remote name ("+
				u.claimedAs[0].Remote+"): the item is not claimed to be free (set gitea.remote to say which remote "+
				"Gitea is)",
			evs...)
	case !e.locksObserved():
		return set(BucketUnknown, "lock files not observed from this host: the item is not claimed to be free")
	case !e.locks.Complete():
		return set(BucketUnknown, "lock files not fully read: the item is not claimed to be free")
	case !e.leasesComplete():
		return set(BucketUnknown, "control-plane leases not fully read: the item is not claimed to be free")
	case e.remote.How == remoteAmbiguous:
		return set(
			BucketUnknown,
			"Gitea's facts are not joined with this item: the records name the repository under several remotes ("+strings.Join(
				e.remote.Named,
				", ",
			)+") and gitea.remote is not set",
		)
	case f == nil || !e.giteaUsable():
		return set(BucketUnknown, "Gitea state not read: the item is not claimed to be runnable")
	case !f.Found || f.State != "open":
		return set(BucketUnknown, "Gitea does not show the item open")
	case !e.gitea.Complete():
		return set(BucketUnknown, "Gitea read was partial")
	}
	_ = now
	return set(BucketRunnable, "no active lease, no live lock, no block label",
		ev(SourceDB, "leases", "no non-terminal lease on the item (leases read completely)"),
		ev(SourceLocks, "locks", "no live lock file names the item (lock directory read completely)"))
}

// giteaState is what Gitea says of an item's state: open, closed, merged, or not found.
func giteaState(f *GiteaFact) string {
	switch {
	case !f.Found:
		return "not found"
	case f.Merged:
		return "merged"
	}
	return f.State
}

// holders is the evidence of what holds the item: its non-terminal leases and live locks.
func holders(u *unitIn) []Evidence {
	var out []Evidence
	for _, l := range u.leases {
		if leaseActive(&l.Lease) {
			out = append(
				out,
				ev(
					SourceDB,
					"leases."+l.Lease.LeaseID,
					l.Lease.StatusText()+", session "+l.Lease.SessionID+", expires_at "+l.Lease.ExpiresAt.Raw,
				),
			)
		}
	}
	for _, lo := range u.locks {
		if lo.Entry.Unreadable == nil {
			out = append(out, ev(SourceLocks, "lock_file", lo.Entry.Name+" (owner_session "+lo.Entry.Record.OwnerSession+")"))
		}
	}
	return out
}
