package leases

import (
	"context"
	"database/sql"
	"time"
)

// fenced runs a transition on one lease: read it inside the transaction,
// run guard, and on success apply. Refusals roll back (nothing written).
func (s *SQLiteStore) fenced(ctx context.Context, op Op, f Fence,
	guard func(l *Lease) (Verdict, error),
	apply func(ctx context.Context, tx *sql.Tx, l *Lease) (Outcome, error)) (Outcome, error) {
	if v := schemaVerdict(s.info, op); !v.OK {
		return Outcome{Code: v.Code, Message: v.Message}, nil
	}
	return s.run(ctx, string(op), func(ctx context.Context, tx *sql.Tx) (Outcome, bool, error) {
		l, err := s.leaseInTx(ctx, tx, f.LeaseID)
		if err != nil {
			return Outcome{}, false, err
		}
		v, err := guard(l)
		if err != nil {
			return Outcome{}, false, err
		}
		if !v.OK {
			return Outcome{Code: v.Code, Message: v.Message, Lease: l}, false, nil
		}
		out, err := apply(ctx, tx, l)
		if err != nil {
			return Outcome{}, false, err
		}
		if out.Lease, err = s.leaseInTx(ctx, tx, l.LeaseID); err != nil {
			return Outcome{}, false, err
		}
		return out, false, nil
	})
}

// end moves an active lease to a terminal status and ends its assignments. The guard
// proved the lease active (in any case) inside this transaction; exactly one row must
// change.
func (s *SQLiteStore) end(ctx context.Context, tx *sql.Tx, l *Lease, st Status, reason string, now time.Time) error {
	n, err := s.update(ctx, tx, "leases", []colVal{set("status", string(st)), set("released_at", s.ts(now)),
		set("end_reason", reason)}, "WHERE lease_id = ?", l.LeaseID)
	if err != nil {
		return err
	}
	if n != 1 {
		return &DBError{Op: "end lease", Path: s.path, Err: ErrSQLite, Detail: "lease " + l.LeaseID + ": " + itoa(n) + " rows changed, want 1"}
	}
	if !s.has("assignments", "lease_id") {
		return nil
	}
	_, err = s.update(ctx, tx, "assignments", []colVal{set("status", string(st))},
		"WHERE lease_id = ? AND "+foldSQL("status")+" = 'active'", l.LeaseID)
	return err
}

// Heartbeat renews a lease held by the fenced session: expires_at becomes
// now + the policy TTL (capped by the absolute cap from created_at),
// last_heartbeat_at now, heartbeat_count + 1; the session's heartbeat is
// refreshed and a lease.renew event written.
func (s *SQLiteStore) Heartbeat(ctx context.Context, f Fence, now time.Time) (Outcome, error) {
	var p Policy
	return s.fenced(ctx, OpHeartbeat, f, func(l *Lease) (Verdict, error) {
		if l != nil {
			p, _ = s.opt.Policies.ForLease(*l)
		}
		return CheckHeartbeat(l, f, p, now), nil
	}, func(ctx context.Context, tx *sql.Tx, l *Lease) (Outcome, error) {
		exp, ts := s.ts(renewedExpiry(l, p, now)), s.ts(now)
		if _, err := s.update(ctx, tx, "leases", []colVal{set("expires_at", exp), set("last_heartbeat_at", ts),
			setExpr("heartbeat_count", "coalesce(heartbeat_count, 0) + 1"),
			setExpr("lease_generation_id", "coalesce(lease_generation_id, 0) + 1")},
			"WHERE lease_id = ?", l.LeaseID); err != nil {
			return Outcome{}, err
		}
		if s.has("sessions", "session_id") {
			if _, err := s.update(ctx, tx, "sessions", []colVal{set("last_heartbeat_at", ts)}, "WHERE session_id = ?",
				l.SessionID); err != nil {
				return Outcome{}, err
			}
		}
		id, err := s.insertEvent(ctx, tx, l.WorkItemID, "lease.renew", "lease renewed", l.SessionID,
			map[string]any{"lease_id": l.LeaseID, "expires_at": exp}, now)
		return Outcome{Code: CodeOK, Message: "lease renewed until " + exp, EventIDs: eventIDs(id)}, err
	})
}

// Release ends a lease held by the fenced session (status released, reason
// recorded in end_reason) and writes a lease.release event.
func (s *SQLiteStore) Release(ctx context.Context, f Fence, reason string, now time.Time) (Outcome, error) {
	return s.fenced(ctx, OpRelease, f, func(l *Lease) (Verdict, error) {
		return CheckRelease(l, f), nil
	}, func(ctx context.Context, tx *sql.Tx, l *Lease) (Outcome, error) {
		if reason == "" {
			reason = "released"
		}
		if err := s.end(ctx, tx, l, StatusReleased, reason, now); err != nil {
			return Outcome{}, err
		}
		id, err := s.insertEvent(ctx, tx, l.WorkItemID, "lease.release", "lease released", l.SessionID,
			map[string]any{"lease_id": l.LeaseID, "reason": reason}, now)
		return Outcome{Code: CodeOK, Message: "lease released", EventIDs: eventIDs(id)}, err
	})
}

// ReclaimExpired ends an active lease whose fenced expiry has passed (status
// expired, end_reason reclaimed) so the item is free again, and writes a
// lease.reclaim event naming the reclaiming session (by, may be empty).
func (s *SQLiteStore) ReclaimExpired(ctx context.Context, f Fence, by string, now time.Time) (Outcome, error) {
	return s.fenced(ctx, OpReclaim, f, func(l *Lease) (Verdict, error) {
		return CheckReclaimExpired(l, f, now), nil
	}, func(ctx context.Context, tx *sql.Tx, l *Lease) (Outcome, error) {
		if err := s.end(ctx, tx, l, StatusExpired, "reclaimed", now); err != nil {
			return Outcome{}, err
		}
		id, err := s.insertEvent(ctx, tx, l.WorkItemID, "lease.reclaim", "expired lease reclaimed", by,
			map[string]any{"lease_id": l.LeaseID, "holding_session_id": l.SessionID,
				"expires_at": l.ExpiresAt.Raw, "reclaimed_by": by}, now)
		return Outcome{Code: CodeOK, Message: "expired lease reclaimed; the item is free", EventIDs: eventIDs(id)}, err
	})
}

// AbandonRequest is the proof an Abandon records.
type AbandonRequest struct {
	Fence    Fence
	Evidence Evidence
	Actor    string         // who abandons (operator login or session)
	Detail   map[string]any // extra evidence (e.g. the kill(0) errno, stat error)
}

// Abandon ends a stale lease (status abandoned, end_reason = the stale
// freshness value) after re-classifying it with the caller's evidence inside
// the transaction; the evidence is recorded in a lease.abandon event.
func (s *SQLiteStore) Abandon(ctx context.Context, req AbandonRequest, now time.Time) (Outcome, error) {
	var fr FreshnessResult
	return s.fenced(ctx, OpAbandon, req.Fence, func(l *Lease) (Verdict, error) {
		var p Policy
		if l != nil {
			p, _ = s.opt.Policies.ForLease(*l)
		}
		var v Verdict
		v, fr = CheckAbandon(l, req.Fence, p, req.Evidence, now)
		return v, nil
	}, func(ctx context.Context, tx *sql.Tx, l *Lease) (Outcome, error) {
		if err := s.end(ctx, tx, l, StatusAbandoned, string(fr.Value), now); err != nil {
			return Outcome{}, err
		}
		id, err := s.insertEvent(ctx, tx, l.WorkItemID, "lease.abandon", "stale lease abandoned: "+string(fr.Value),
			req.Actor, map[string]any{"lease_id": l.LeaseID, "holding_session_id": l.SessionID,
				"freshness": string(fr.Value), "reasons": fr.Reasons, "owner": string(req.Evidence.Owner),
				"worktree": string(req.Evidence.Worktree), "actor": req.Actor, "detail": req.Detail}, now)
		frc := fr
		return Outcome{Code: CodeOK, Message: "lease abandoned (" + string(fr.Value) + ")",
			Freshness: &frc, EventIDs: eventIDs(id)}, err
	})
}

// ExpireSweep marks every active lease whose recorded expiry is not after
// now as expired (end_reason expire_sweep), one lease.expire event each, and
// returns their ids in Outcome.Expired. Missing or unparseable expiries are
// kept held.
func (s *SQLiteStore) ExpireSweep(ctx context.Context, now time.Time) (Outcome, error) {
	if v := schemaVerdict(s.info, OpSweep); !v.OK {
		return Outcome{Code: v.Code, Message: v.Message}, nil
	}
	return s.run(ctx, string(OpSweep), func(ctx context.Context, tx *sql.Tx) (Outcome, bool, error) {
		ls, err := leasesWhereInfo(ctx, tx, s.info, "WHERE "+foldSQL("status")+" = 'active'")
		if err != nil {
			return Outcome{}, false, err
		}
		out := Outcome{Code: CodeOK}
		byID := make(map[string]*Lease, len(ls))
		for i := range ls {
			byID[ls[i].LeaseID] = &ls[i]
		}
		for _, id := range SweepCandidates(ls, now) {
			l := byID[id]
			if err := s.end(ctx, tx, l, StatusExpired, "expire_sweep", now); err != nil {
				return Outcome{}, false, err
			}
			ev, err := s.insertEvent(ctx, tx, l.WorkItemID, "lease.expire", "lease expired", l.SessionID,
				map[string]any{"lease_id": id, "expires_at": l.ExpiresAt.Raw}, now)
			if err != nil {
				return Outcome{}, false, err
			}
			out.Expired = append(out.Expired, id)
			out.EventIDs = append(out.EventIDs, eventIDs(ev)...)
		}
		out.Message = plural(len(out.Expired), "lease") + " expired"
		return out, false, nil
	})
}

// eventIDs lists an event id written (none when the DB has no events table).
func eventIDs(id int64) []int64 {
	if id == 0 {
		return nil
	}
	return []int64{id}
}
