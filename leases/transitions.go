package leases

import (
	"context"
	"time"

	"steward/leases/leaserec"
)

// fenced runs a transition on one lease: take its row lock (PostgreSQL), read the clock,
// run guard on the row as it is now, and on success apply — whose UPDATE repeats the
// fence in its WHERE on PostgreSQL (fenceWhere). A refusal rolls back (nothing written).
func (w *writes) fenced(ctx context.Context, op Op, f Fence, now time.Time,
	guard func(l *leaserec.Lease, now time.Time) Verdict,
	apply func(ctx context.Context, tx wtx, l *leaserec.Lease, now time.Time) (Outcome, error)) (Outcome, error) {
	if v := schemaVerdict(w.info, op); !v.OK {
		return Outcome{Code: v.Code, Message: v.Message}, nil
	}
	return w.run(ctx, string(op), func(ctx context.Context, tx wtx) (Outcome, bool, error) {
		// The lock first, then the clock: a transition that waited for the row judges
		// expiry at the instant it holds it.
		if err := w.lock(ctx, tx, `SELECT 1 FROM leases WHERE lease_id = ? FOR UPDATE`, f.LeaseID); err != nil {
			return Outcome{}, false, err
		}
		now, err := w.clock(ctx, tx, now)
		if err != nil {
			return Outcome{}, false, err
		}
		l, err := w.leaseInTx(ctx, tx, f.LeaseID)
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
		if out.Lease, err = w.leaseInTx(ctx, tx, l.LeaseID); err != nil {
			return Outcome{}, false, err
		}
		c := change{EventIDs: out.EventIDs}
		c.add(out.Lease)
		return out, false, w.notify(ctx, tx, c)
	})
}

// fenceWhere is the WHERE of a fenced UPDATE of lease l. On PostgreSQL: the lease id,
// its status still active in any case, its holder, its lease_generation_id (when the
// table has one) and the expiry text it was read with — the fence, checked again by the
// statement itself. On SQLite the lease id: BEGIN IMMEDIATE has held the DB since the
// guard read the row.
func (w *writes) fenceWhere(l *leaserec.Lease) (string, []any) {
	if !w.info.pg {
		return "WHERE lease_id = ?", []any{l.LeaseID}
	}
	where := "WHERE lease_id = ? AND " + w.info.fold("status") + " = 'active'"
	args := []any{l.LeaseID}
	if w.has("leases", "session_id") {
		where += " AND session_id = ?"
		args = append(args, l.SessionID)
	}
	if w.has("leases", "lease_generation_id") {
		where += " AND coalesce(lease_generation_id, 0) = ?"
		args = append(args, l.Generation)
	}
	if w.has("leases", "expires_at") {
		if l.ExpiresAt.Raw == "" {
			where += " AND expires_at IS NULL"
		} else {
			where += " AND " + w.info.textOf("expires_at", w.info.cols["leases"]["expires_at"]) + " = ?"
			args = append(args, l.ExpiresAt.Raw)
		}
	}
	return where, args
}

// changedOne reports whether a fenced UPDATE of lease l changed its one row (n rows
// changed). On PostgreSQL another count is the fence failing in the statement: the row
// moved between the guard and the write (moved), which the row lock rules out. On
// SQLite, whose WHERE names only the id the guard read under the DB's write lock, it is
// an error of the DB.
func (w *writes) changedOne(op string, l *leaserec.Lease, n int64) (bool, error) {
	switch {
	case n == 1:
		return true, nil
	case w.info.pg:
		return false, nil
	}
	return false, &DBError{Op: op, Path: w.path, Err: errSQLite,
		Detail: "lease " + l.LeaseID + ": " + itoa(n) + " rows changed, want 1"}
}

// moved is the refusal of a fenced UPDATE that changed no row although the guard
// allowed it: the row moved between the two — reported as fence_moved, never as applied.
func moved(l *leaserec.Lease) Outcome {
	return Outcome{Code: CodeFenceMoved, Message: "lease " + quote(l.LeaseID) +
		" changed while it was being written; re-read and preview again", Lease: l}
}

// end moves an active lease to a terminal status under its fence (and timeCond, a
// condition on expires_at against now), and ends its assignments. ok is false when the
// fence failed in the statement (changedOne).
func (w *writes) end(ctx context.Context, tx wtx, l *leaserec.Lease, st leaserec.Status, reason string, now time.Time,
	timeCond string) (ok bool, _ error) {
	where, args := w.fenceWhere(l)
	if timeCond != "" {
		where += timeCond
		args = append(args, now.UTC())
	}
	n, err := w.update(ctx, tx, "leases", []colVal{set("status", string(st)),
		set("released_at", w.timeVal("leases", "released_at", now)), set("end_reason", reason)}, where, args...)
	if err != nil {
		return false, err
	}
	if ok, err := w.changedOne("end lease", l, n); !ok {
		return false, err
	}
	if !w.has("assignments", "lease_id") {
		return true, nil
	}
	_, err = w.update(ctx, tx, "assignments", []colVal{set("status", string(st))},
		"WHERE lease_id = ? AND "+w.info.fold("status")+" = 'active'", l.LeaseID)
	return true, err
}

// Heartbeat renews a lease held by the fenced session: expires_at becomes now + the
// policy TTL (capped by the absolute cap from created_at), last_heartbeat_at now,
// heartbeat_count + 1, and the lease_generation_id moves on (the seed's renewal
// increments it); the session's heartbeat is refreshed and a lease.renew event written.
// On PostgreSQL the UPDATE is fenced on the lease's generation and on expires_at > the
// database's clock.
func (w *writes) Heartbeat(ctx context.Context, f Fence, now time.Time) (Outcome, error) {
	var p leaserec.Policy
	return w.fenced(ctx, OpHeartbeat, f, now, func(l *leaserec.Lease, now time.Time) Verdict {
		if l != nil {
			p, _ = w.opt.Policies.ForLease(*l)
		}
		return CheckHeartbeat(l, f, p, now)
	}, func(ctx context.Context, tx wtx, l *leaserec.Lease, now time.Time) (Outcome, error) {
		exp := renewedExpiry(l, p, now)
		where, args := w.fenceWhere(l)
		if c := w.timeCond("leases", "expires_at", ">"); c != "" {
			where += c
			args = append(args, now.UTC())
		}
		n, err := w.update(ctx, tx, "leases", []colVal{set("expires_at", w.timeVal("leases", "expires_at", exp)),
			set("last_heartbeat_at", w.timeVal("leases", "last_heartbeat_at", now)),
			setExpr("heartbeat_count", "coalesce(heartbeat_count, 0) + 1"),
			setExpr("lease_generation_id", "coalesce(lease_generation_id, 0) + 1")}, where, args...)
		if err != nil {
			return Outcome{}, err
		}
		if ok, err := w.changedOne("renew lease", l, n); !ok {
			return moved(l), err
		}
		if w.has("sessions", "session_id") {
			if _, err := w.update(ctx, tx, "sessions", []colVal{set("last_heartbeat_at",
				w.timeVal("sessions", "last_heartbeat_at", now))}, "WHERE session_id = ?", l.SessionID); err != nil {
				return Outcome{}, err
			}
		}
		shown := w.stamp(exp)
		id, err := w.insertEvent(ctx, tx, l.WorkItemID, "lease.renew", "lease renewed", l.SessionID,
			map[string]any{"lease_id": l.LeaseID, "expires_at": shown}, now)
		return Outcome{Code: CodeOK, Message: "lease renewed until " + shown, EventIDs: eventIDs(id)}, err
	})
}

// Release ends a lease held by the fenced session (status released, reason recorded in
// end_reason) and writes a lease.release event.
func (w *writes) Release(ctx context.Context, f Fence, reason string, now time.Time) (Outcome, error) {
	return w.fenced(ctx, OpRelease, f, now, func(l *leaserec.Lease, _ time.Time) Verdict {
		return CheckRelease(l, f)
	}, func(ctx context.Context, tx wtx, l *leaserec.Lease, now time.Time) (Outcome, error) {
		if reason == "" {
			reason = "released"
		}
		if ok, err := w.end(ctx, tx, l, leaserec.StatusReleased, reason, now, ""); err != nil || !ok {
			return moved(l), err
		}
		id, err := w.insertEvent(ctx, tx, l.WorkItemID, "lease.release", "lease released", l.SessionID,
			map[string]any{"lease_id": l.LeaseID, "reason": reason}, now)
		return Outcome{Code: CodeOK, Message: "lease released", EventIDs: eventIDs(id)}, err
	})
}

// ReclaimExpired ends an active lease whose fenced expiry has passed (status expired,
// end_reason reclaimed) so the item is free again, and writes a lease.reclaim event
// naming the reclaiming session (by, may be empty). On PostgreSQL the UPDATE checks
// expires_at <= the database's clock.
func (w *writes) ReclaimExpired(ctx context.Context, f Fence, by string, now time.Time) (Outcome, error) {
	return w.fenced(ctx, OpReclaim, f, now, func(l *leaserec.Lease, now time.Time) Verdict {
		return CheckReclaimExpired(l, f, now)
	}, func(ctx context.Context, tx wtx, l *leaserec.Lease, now time.Time) (Outcome, error) {
		expired := w.timeCond("leases", "expires_at", "<=")
		if ok, err := w.end(ctx, tx, l, leaserec.StatusExpired, "reclaimed", now, expired); err != nil || !ok {
			return moved(l), err
		}
		id, err := w.insertEvent(ctx, tx, l.WorkItemID, "lease.reclaim", "expired lease reclaimed", by,
			map[string]any{"lease_id": l.LeaseID, "holding_session_id": l.SessionID,
				"expires_at": l.ExpiresAt.Raw, "reclaimed_by": by}, now)
		return Outcome{Code: CodeOK, Message: "expired lease reclaimed; the item is free", EventIDs: eventIDs(id)}, err
	})
}

// AbandonRequest is the proof an Abandon records.
type AbandonRequest struct {
	Fence    Fence
	Evidence leaserec.Evidence
	Actor    string         // who abandons (operator login or session)
	Detail   map[string]any // extra evidence (e.g. the kill(0) errno, stat error)
}

// Abandon ends a stale lease (status abandoned, end_reason = the stale freshness value)
// after re-classifying it with the caller's evidence inside the transaction, at the
// transition's clock; the evidence is recorded in a lease.abandon event.
func (w *writes) Abandon(ctx context.Context, req AbandonRequest, now time.Time) (Outcome, error) {
	var fr leaserec.FreshnessResult
	return w.fenced(ctx, OpAbandon, req.Fence, now, func(l *leaserec.Lease, now time.Time) Verdict {
		var p leaserec.Policy
		if l != nil {
			p, _ = w.opt.Policies.ForLease(*l)
		}
		var v Verdict
		v, fr = CheckAbandon(l, req.Fence, p, req.Evidence, now)
		return v
	}, func(ctx context.Context, tx wtx, l *leaserec.Lease, now time.Time) (Outcome, error) {
		if ok, err := w.end(ctx, tx, l, leaserec.StatusAbandoned, string(fr.Value), now, ""); err != nil || !ok {
			return moved(l), err
		}
		id, err := w.insertEvent(ctx, tx, l.WorkItemID, "lease.abandon", "stale lease abandoned: "+string(fr.Value),
			req.Actor, map[string]any{"lease_id": l.LeaseID, "holding_session_id": l.SessionID,
				"freshness": string(fr.Value), "reasons": fr.Reasons, "owner": string(req.Evidence.Owner),
				"worktree": string(req.Evidence.Worktree), "actor": req.Actor, "detail": req.Detail}, now)
		frc := fr
		return Outcome{Code: CodeOK, Message: "lease abandoned (" + string(fr.Value) + ")",
			Freshness: &frc, EventIDs: eventIDs(id)}, err
	})
}

// ExpireSweep marks every active lease whose recorded expiry is not after now (on
// PostgreSQL the database's clock) as expired (end_reason expire_sweep), one
// lease.expire event each, and returns their ids in Outcome.Expired. Missing or
// unparseable expiries are kept held. On PostgreSQL the candidates are locked in lease
// id order (two sweeps never deadlock), and each UPDATE is fenced as a reclaim's is.
func (w *writes) ExpireSweep(ctx context.Context, now time.Time) (Outcome, error) {
	if v := schemaVerdict(w.info, OpSweep); !v.OK {
		return Outcome{Code: v.Code, Message: v.Message}, nil
	}
	return w.run(ctx, string(OpSweep), func(ctx context.Context, tx wtx) (Outcome, bool, error) {
		scope := "WHERE " + w.info.fold("status") + " = 'active'"
		if w.info.pg {
			if w.timeCond("leases", "expires_at", "<=") != "" {
				scope += " AND expires_at <= clock_timestamp()"
			}
			scope += " ORDER BY lease_id"
		}
		if err := w.lock(ctx, tx, "SELECT 1 FROM leases "+scope+" FOR UPDATE"); err != nil {
			return Outcome{}, false, err
		}
		now, err := w.clock(ctx, tx, now)
		if err != nil {
			return Outcome{}, false, err
		}
		ls, err := leasesWhereInfo(ctx, tx, w.info, scope)
		if err != nil {
			return Outcome{}, false, err
		}
		out := Outcome{Code: CodeOK}
		byID := make(map[string]*leaserec.Lease, len(ls))
		for i := range ls {
			byID[ls[i].LeaseID] = &ls[i]
		}
		var c change
		for _, id := range SweepCandidates(ls, now) {
			l := byID[id]
			ok, err := w.end(ctx, tx, l, leaserec.StatusExpired, "expire_sweep", now, w.timeCond("leases", "expires_at", "<="))
			if err != nil {
				return Outcome{}, false, err
			}
			if !ok {
				continue // locked by an earlier statement of this sweep only: cannot move; skip rather than guess
			}
			ev, err := w.insertEvent(ctx, tx, l.WorkItemID, "lease.expire", "lease expired", l.SessionID,
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
		return out, false, w.notify(ctx, tx, c)
	})
}

// eventIDs lists an event id written (none when the DB has no events table).
func eventIDs(id int64) []int64 {
	if id == 0 {
		return nil
	}
	return []int64{id}
}
