package leases

import (
	"context"
	"time"
)

// fenced runs a transition on one lease: lock its row, read the database's clock, run
// guard on the row as it is now, and on success apply — whose UPDATE repeats the fence
// in its WHERE (fenceWhere). A refusal rolls back (nothing written).
func (s *PGStore) fenced(ctx context.Context, op Op, f Fence,
	guard func(l *Lease, now time.Time) Verdict,
	apply func(ctx context.Context, tx pgTx, l *Lease, now time.Time) (Outcome, error)) (Outcome, error) {
	if v := schemaVerdict(s.info, op); !v.OK {
		return Outcome{Code: v.Code, Message: v.Message}, nil
	}
	return s.run(ctx, string(op), func(ctx context.Context, tx pgTx) (Outcome, bool, error) {
		// The lock first, then the clock: a transition that waited for the row judges
		// expiry at the instant it holds it.
		if _, err := tx.exec(ctx, `SELECT 1 FROM leases WHERE lease_id = ? FOR UPDATE`, f.LeaseID); err != nil {
			return Outcome{}, false, err
		}
		now, err := dbClock(ctx, tx.tx, s.path)
		if err != nil {
			return Outcome{}, false, err
		}
		l, err := s.leaseInTx(ctx, tx, f.LeaseID)
		if err != nil {
			return Outcome{}, false, err
		}
		if v := guard(l, now); !v.OK {
			return Outcome{Code: v.Code, Message: v.Message, Lease: l}, false, nil
		}
		out, err := apply(ctx, tx, l, now)
		if err != nil || !out.OK() {
			return out, false, err
		}
		if out.Lease, err = s.leaseInTx(ctx, tx, l.LeaseID); err != nil {
			return Outcome{}, false, err
		}
		c := Change{EventIDs: out.EventIDs}
		c.add(out.Lease)
		return out, false, s.notify(ctx, tx, c)
	})
}

// fenceWhere is the WHERE of a fenced UPDATE of lease l: the lease id, its status still
// active in any case, its holder, its lease_generation_id (when the table has one) and
// the expiry text it was read with — the fence, checked again by the statement itself.
func (s *PGStore) fenceWhere(l *Lease) (string, []any) {
	w := "WHERE lease_id = ? AND " + pgSQL.fold("status") + " = 'active'"
	args := []any{l.LeaseID}
	if s.has("leases", "session_id") {
		w += " AND session_id = ?"
		args = append(args, l.SessionID)
	}
	if s.has("leases", "lease_generation_id") {
		w += " AND coalesce(lease_generation_id, 0) = ?"
		args = append(args, l.Generation)
	}
	if s.has("leases", "expires_at") {
		if l.ExpiresAt.Raw == "" {
			w += " AND expires_at IS NULL"
		} else {
			w += " AND " + pgSQL.textOf("expires_at", s.info.cols["leases"]["expires_at"]) + " = ?"
			args = append(args, l.ExpiresAt.Raw)
		}
	}
	return w, args
}

// moved is the refusal of a fenced UPDATE that changed no row although the guard
// allowed it: the row moved between the two, which the row lock rules out — reported
// as fence_moved, never as applied.
func moved(l *Lease) Outcome {
	return Outcome{Code: CodeFenceMoved, Message: "lease " + quote(l.LeaseID) +
		" changed while it was being written; re-read and preview again", Lease: l}
}

// end moves an active lease to a terminal status under its fence (and timeCond, a
// condition on expires_at against now), and ends its assignments.
func (s *PGStore) end(ctx context.Context, tx pgTx, l *Lease, st Status, reason string, now time.Time,
	timeCond string) (bool, error) {
	where, args := s.fenceWhere(l)
	if timeCond != "" {
		where += timeCond
		args = append(args, now.UTC())
	}
	n, err := s.update(ctx, tx, "leases", []colVal{set("status", string(st)),
		set("released_at", s.timeVal("leases", "released_at", now)), set("end_reason", reason)}, where, args...)
	if err != nil || n != 1 {
		return false, err
	}
	if !s.has("assignments", "lease_id") {
		return true, nil
	}
	_, err = s.update(ctx, tx, "assignments", []colVal{set("status", string(st))},
		"WHERE lease_id = ? AND "+pgSQL.fold("status")+" = 'active'", l.LeaseID)
	return true, err
}

// Heartbeat renews a lease held by the fenced session (see SQLiteStore.Heartbeat), its
// UPDATE fenced on the lease's generation and on expires_at > the database's clock;
// the lease_generation_id moves on (the seed's renewal increments it).
func (s *PGStore) Heartbeat(ctx context.Context, f Fence, _ time.Time) (Outcome, error) {
	var p Policy
	return s.fenced(ctx, OpHeartbeat, f, func(l *Lease, now time.Time) Verdict {
		if l != nil {
			p, _ = s.opt.Policies.ForLease(*l)
		}
		return CheckHeartbeat(l, f, p, now)
	}, func(ctx context.Context, tx pgTx, l *Lease, now time.Time) (Outcome, error) {
		exp := renewedExpiry(l, p, now)
		where, args := s.fenceWhere(l)
		if c := s.timeCond("leases", "expires_at", ">"); c != "" {
			where += c
			args = append(args, now.UTC())
		}
		n, err := s.update(ctx, tx, "leases", []colVal{set("expires_at", s.timeVal("leases", "expires_at", exp)),
			set("last_heartbeat_at", s.timeVal("leases", "last_heartbeat_at", now)),
			setExpr("heartbeat_count", "coalesce(heartbeat_count, 0) + 1"),
			setExpr("lease_generation_id", "coalesce(lease_generation_id, 0) + 1")}, where, args...)
		if err != nil {
			return Outcome{}, err
		}
		if n != 1 {
			return moved(l), nil
		}
		if s.has("sessions", "session_id") {
			if _, err := s.update(ctx, tx, "sessions", []colVal{set("last_heartbeat_at", s.timeVal("sessions", "last_heartbeat_at", now))},
				"WHERE session_id = ?", l.SessionID); err != nil {
				return Outcome{}, err
			}
		}
		shown := FormatTime(exp)
		id, err := s.insertEvent(ctx, tx, l.WorkItemID, "lease.renew", "lease renewed", l.SessionID,
			map[string]any{"lease_id": l.LeaseID, "expires_at": shown}, now)
		return Outcome{Code: CodeOK, Message: "lease renewed until " + shown, EventIDs: eventIDs(id)}, err
	})
}

// Release ends a lease held by the fenced session (see SQLiteStore.Release).
func (s *PGStore) Release(ctx context.Context, f Fence, reason string, _ time.Time) (Outcome, error) {
	return s.fenced(ctx, OpRelease, f, func(l *Lease, _ time.Time) Verdict {
		return CheckRelease(l, f)
	}, func(ctx context.Context, tx pgTx, l *Lease, now time.Time) (Outcome, error) {
		if reason == "" {
			reason = "released"
		}
		if ok, err := s.end(ctx, tx, l, StatusReleased, reason, now, ""); err != nil || !ok {
			return moved(l), err
		}
		id, err := s.insertEvent(ctx, tx, l.WorkItemID, "lease.release", "lease released", l.SessionID,
			map[string]any{"lease_id": l.LeaseID, "reason": reason}, now)
		return Outcome{Code: CodeOK, Message: "lease released", EventIDs: eventIDs(id)}, err
	})
}

// ReclaimExpired ends an active lease whose fenced expiry has passed by the database's
// clock (see SQLiteStore.ReclaimExpired); the UPDATE checks expires_at <= that clock.
func (s *PGStore) ReclaimExpired(ctx context.Context, f Fence, by string, _ time.Time) (Outcome, error) {
	return s.fenced(ctx, OpReclaim, f, func(l *Lease, now time.Time) Verdict {
		return CheckReclaimExpired(l, f, now)
	}, func(ctx context.Context, tx pgTx, l *Lease, now time.Time) (Outcome, error) {
		if ok, err := s.end(ctx, tx, l, StatusExpired, "reclaimed", now, s.timeCond("leases", "expires_at", "<=")); err != nil || !ok {
			return moved(l), err
		}
		id, err := s.insertEvent(ctx, tx, l.WorkItemID, "lease.reclaim", "expired lease reclaimed", by,
			map[string]any{"lease_id": l.LeaseID, "holding_session_id": l.SessionID,
				"expires_at": l.ExpiresAt.Raw, "reclaimed_by": by}, now)
		return Outcome{Code: CodeOK, Message: "expired lease reclaimed; the item is free", EventIDs: eventIDs(id)}, err
	})
}

// Abandon ends a stale lease after re-classifying it with the caller's evidence at the
// database's clock, under the row lock (see SQLiteStore.Abandon).
func (s *PGStore) Abandon(ctx context.Context, req AbandonRequest, _ time.Time) (Outcome, error) {
	var fr FreshnessResult
	return s.fenced(ctx, OpAbandon, req.Fence, func(l *Lease, now time.Time) Verdict {
		var p Policy
		if l != nil {
			p, _ = s.opt.Policies.ForLease(*l)
		}
		var v Verdict
		v, fr = CheckAbandon(l, req.Fence, p, req.Evidence, now)
		return v
	}, func(ctx context.Context, tx pgTx, l *Lease, now time.Time) (Outcome, error) {
		if ok, err := s.end(ctx, tx, l, StatusAbandoned, string(fr.Value), now, ""); err != nil || !ok {
			return moved(l), err
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

// ExpireSweep marks every active lease whose recorded expiry is not after the database's
// clock as expired (see SQLiteStore.ExpireSweep): the candidates are locked in lease id
// order (two sweeps never deadlock), and each UPDATE is fenced as a reclaim's is.
func (s *PGStore) ExpireSweep(ctx context.Context, _ time.Time) (Outcome, error) {
	if v := schemaVerdict(s.info, OpSweep); !v.OK {
		return Outcome{Code: v.Code, Message: v.Message}, nil
	}
	return s.run(ctx, string(OpSweep), func(ctx context.Context, tx pgTx) (Outcome, bool, error) {
		where := "WHERE " + pgSQL.fold("status") + " = 'active'"
		if c := s.timeCond("leases", "expires_at", "<="); c != "" {
			where += " AND expires_at <= clock_timestamp()"
		}
		if _, err := tx.exec(ctx, "SELECT 1 FROM leases "+where+" ORDER BY lease_id FOR UPDATE"); err != nil {
			return Outcome{}, false, err
		}
		now, err := dbClock(ctx, tx.tx, s.path)
		if err != nil {
			return Outcome{}, false, err
		}
		ls, err := leasesWhereInfo(ctx, tx, s.info, where+" ORDER BY lease_id")
		if err != nil {
			return Outcome{}, false, err
		}
		out := Outcome{Code: CodeOK}
		byID := make(map[string]*Lease, len(ls))
		for i := range ls {
			byID[ls[i].LeaseID] = &ls[i]
		}
		var c Change
		for _, id := range SweepCandidates(ls, now) {
			l := byID[id]
			ok, err := s.end(ctx, tx, l, StatusExpired, "expire_sweep", now, s.timeCond("leases", "expires_at", "<="))
			if err != nil {
				return Outcome{}, false, err
			}
			if !ok {
				continue // locked by an earlier statement of this sweep only: cannot move; skip rather than guess
			}
			ev, err := s.insertEvent(ctx, tx, l.WorkItemID, "lease.expire", "lease expired", l.SessionID,
				map[string]any{"lease_id": id, "expires_at": l.ExpiresAt.Raw}, now)
			if err != nil {
				return Outcome{}, false, err
			}
			out.Expired = append(out.Expired, id)
			out.EventIDs = append(out.EventIDs, eventIDs(ev)...)
			c.add(l)
		}
		out.Message = plural(len(out.Expired), "lease") + " expired"
		if len(out.Expired) == 0 {
			return out, false, nil
		}
		c.EventIDs = out.EventIDs
		return out, false, s.notify(ctx, tx, c)
	})
}
