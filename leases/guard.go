package leases

import (
	"time"

	"steward/leases/leaserec"
)

// Code is a stable refusal code of a transition (CodeOK when applied).
type Code string

// Outcome codes. Every refusal message ends with what to do instead.
const (
	CodeOK                    Code = "ok"
	CodeFenceMoved            Code = "fence_moved"
	CodeFenceIncomplete       Code = "fence_incomplete"
	CodeAlreadyReleased       Code = "already_released"
	CodeNotExpired            Code = "not_expired"
	CodeNotActive             Code = "not_active"
	CodeNotFound              Code = "not_found"
	CodeNotStale              Code = "not_stale"
	CodeLeaseExpired          Code = "lease_expired"
	CodeAbsoluteCapReached    Code = "absolute_cap_reached"
	CodeClaimedByOtherSession Code = "claimed_by_other_session"
	CodeAlreadyHeld           Code = "already_held"
	CodeInvalidRequest        Code = "invalid_request"
	CodeBusy                  Code = "busy"
	// CodeSchemaUnsupported: the DB lacks a column the transition cannot do without
	// (see Reader.Supports); nothing was written.
	CodeSchemaUnsupported Code = "schema_unsupported"
)

// Fence is what a caller read about a lease and wants unchanged when its
// transition applies. LeaseID, SessionID (the holder) and Generation (the
// seed's lease_generation_id; 0 where the DB records none) are always
// compared; Status (folded) and ExpiresAt (raw text, byte for byte) when set.
type Fence struct {
	LeaseID    string
	Status     leaserec.Status
	SessionID  string
	ExpiresAt  string
	Generation int64
}

// FenceOf returns the full fence of a lease as read.
func FenceOf(l leaserec.Lease) Fence {
	return Fence{LeaseID: l.LeaseID, Status: l.Status, SessionID: l.SessionID, ExpiresAt: l.ExpiresAt.Raw,
		Generation: l.Generation}
}

// Verdict is the answer of a pure guard: OK, or a refusal code and message.
type Verdict struct {
	OK      bool
	Code    Code
	Message string
}

var allowed = Verdict{OK: true, Code: CodeOK}

func refuse(c Code, msg string) Verdict { return Verdict{Code: c, Message: msg} }

// checkFence runs the checks every fenced transition shares. l is nil when
// the lease was not found.
func checkFence(l *leaserec.Lease, f Fence) Verdict {
	switch {
	case l == nil:
		return refuse(CodeNotFound, "lease "+quote(f.LeaseID)+" does not exist; re-read the item before acting")
	case leaserec.Fold(string(l.Status)) == string(leaserec.StatusReleased):
		return refuse(CodeAlreadyReleased, "lease "+quote(l.LeaseID)+" is already released; nothing to do")
	case !l.Status.Active():
		return refuse(
			CodeNotActive,
			"lease "+quote(l.LeaseID)+" is "+string(l.Status)+", not active; re-read and claim afresh if the item is free",
		)
	case f.Status != "" && leaserec.Fold(string(f.Status)) != leaserec.Fold(string(l.Status)),
		f.SessionID != l.SessionID,
		f.ExpiresAt != "" && f.ExpiresAt != l.ExpiresAt.Raw,
		f.Generation != l.Generation:
		msg := "lease " + quote(l.LeaseID) + " changed since it was read (holder " +
			quote(l.SessionID) + ", expires_at " + quote(l.ExpiresAt.Raw)
		if l.HasGeneration || f.Generation != 0 {
			msg += ", lease_generation_id " + itoa(l.Generation) + ", fenced on " + itoa(f.Generation)
		}
		return refuse(CodeFenceMoved, msg+"); re-read and preview again")
	}
	return allowed
}

// CheckHeartbeat is the guard of Heartbeat: the lease is active, held by the
// fenced session, unchanged, not past its expiry (an unrecorded expiry is
// held, so a heartbeat may repair it) and not at its absolute cap.
func CheckHeartbeat(l *leaserec.Lease, f Fence, p leaserec.Policy, now time.Time) Verdict {
	if v := checkFence(l, f); !v.OK {
		return v
	}
	if l.ExpiresAt.OK() && !l.ExpiresAt.Time.After(now) {
		return refuse(CodeLeaseExpired, "lease "+quote(l.LeaseID)+" expired at "+l.ExpiresAt.Raw+
			"; it can no longer be renewed — claim the item again")
	}
	if c, ok := p.AbsoluteCap(); ok && l.CreatedAt.OK() && !now.Before(l.CreatedAt.Time.Add(c)) {
		return refuse(CodeAbsoluteCapReached, "lease "+quote(l.LeaseID)+" reached its absolute cap of "+
			c.String()+"; release it and claim again")
	}
	return allowed
}

// renewedExpiry is now + the policy TTL, capped by created_at + absolute cap.
func renewedExpiry(l *leaserec.Lease, p leaserec.Policy, now time.Time) time.Time {
	exp := now.Add(p.InitialTTL())
	if c, ok := p.AbsoluteCap(); ok && l.CreatedAt.OK() {
		if limit := l.CreatedAt.Time.Add(c); exp.After(limit) {
			exp = limit
		}
	}
	return exp
}

// CheckRelease is the guard of Release: the lease is active, held by the
// fenced session and otherwise unchanged.
func CheckRelease(l *leaserec.Lease, f Fence) Verdict { return checkFence(l, f) }

// CheckReclaimExpired is the guard of ReclaimExpired: the fence names the
// expiry it saw, the lease is still active with that holder and expiry, and
// the expiry is recorded and not after now. A missing or unparseable expiry
// keeps the claim held (not_expired).
func CheckReclaimExpired(l *leaserec.Lease, f Fence, now time.Time) Verdict {
	if f.ExpiresAt == "" {
		return refuse(
			CodeFenceIncomplete,
			"a reclaim must be fenced on the expires_at it read; re-read the lease and preview again",
		)
	}
	if v := checkFence(l, f); !v.OK {
		return v
	}
	if !l.ExpiresAt.OK() {
		return refuse(CodeNotExpired, "lease "+quote(l.LeaseID)+" expires_at is "+string(l.ExpiresAt.State)+
			": the claim is kept held, not assumed free; use abandon with proof if its owner is gone")
	}
	if l.ExpiresAt.Time.After(now) {
		return refuse(CodeNotExpired, "lease "+quote(l.LeaseID)+" is live until "+l.ExpiresAt.Raw+
			"; wait for expiry or abandon it with proof")
	}
	return allowed
}

// CheckAbandon is the guard of Abandon: the fence holds and the lease's
// freshness, classified with the caller's evidence at now, is a stale_*
// value. It returns the classification so the apply can record it.
func CheckAbandon(l *leaserec.Lease, f Fence, p leaserec.Policy, ev leaserec.Evidence,
	now time.Time) (Verdict, leaserec.FreshnessResult) {
	if v := checkFence(l, f); !v.OK {
		return v, leaserec.FreshnessResult{}
	}
	fr := leaserec.Classify(*l, p, ev, now)
	if !fr.Value.Stale() {
		msg := "lease " + quote(l.LeaseID) + " is " + string(fr.Value) + ", not stale; "
		if fr.Value == leaserec.FreshExpired {
			msg += "reclaim it instead"
		} else {
			msg += "an active foreign lease is never stolen — wait or ask its owner"
		}
		return refuse(CodeNotStale, msg), fr
	}
	return allowed, fr
}

// CheckClaim is the guard of Claim over the non-terminal leases currently on
// the item. Any active lease refuses: claimed_by_other_session (with
// whether it is past expiry, so the caller can reclaim first) or
// already_held when the requesting session holds it. holder is the blocking
// lease, nil when the claim may proceed.
func CheckClaim(active []leaserec.Lease, session string, now time.Time) (
	v Verdict, holder *leaserec.Lease, pastExpiry bool) {
	for i := range active {
		l := &active[i]
		if !l.Status.Active() {
			continue
		}
		past := l.ExpiresAt.OK() && !l.ExpiresAt.Time.After(now)
		if l.SessionID == session {
			return refuse(CodeAlreadyHeld, "session "+quote(session)+" already holds lease "+
				quote(l.LeaseID)+" on this item; heartbeat it instead"), l, past
		}
		msg := "item is held by session " + quote(l.SessionID) + " (lease " + quote(l.LeaseID) + ")"
		if past {
			msg += ", past its expiry " + l.ExpiresAt.Raw + "; reclaim the expired lease first, then claim"
		} else {
			msg += "; pick other work or wait for its expiry"
		}
		return refuse(CodeClaimedByOtherSession, msg), l, past
	}
	return allowed, nil, false
}

// SweepCandidates returns the ids of active leases whose recorded expiry is
// not after now (missing or unparseable expiries are kept held).
func SweepCandidates(ls []leaserec.Lease, now time.Time) []string {
	var out []string
	for _, l := range ls {
		if l.Status.Active() && l.ExpiresAt.OK() && !l.ExpiresAt.Time.After(now) {
			out = append(out, l.LeaseID)
		}
	}
	return out
}
