package leases

import (
	"context"
	"database/sql"
	"strings"
	"time"
)

// claimRounds bounds how often a claim re-runs its conditional INSERT within one
// transaction when the holder that blocked it ended before it could be named.
const claimRounds = 3

// Claim assigns and leases the work item to the requesting session (see PGStore for
// the statement). A refusal (claimed_by_other_session, already_held) is SQLite's, with
// its claim.refused event committed; now is ignored (the database's clock is used).
func (s *PGStore) Claim(ctx context.Context, req ClaimRequest, _ time.Time) (Outcome, error) {
	if msg := req.validate(); msg != "" {
		return Outcome{Code: CodeInvalidRequest, Message: msg}, nil
	}
	if v := schemaVerdict(s.info, OpClaim); !v.OK {
		return Outcome{Code: v.Code, Message: v.Message}, nil
	}
	return s.run(ctx, "claim", func(ctx context.Context, tx pgTx) (Outcome, bool, error) {
		return s.claimTx(ctx, tx, req)
	})
}

func (s *PGStore) claimTx(ctx context.Context, tx pgTx, req ClaimRequest) (Outcome, bool, error) {
	if !s.steward {
		// No index of steward's refuses a second owner or a second row of the item on a
		// DB steward did not create: steward's claims of one item take turns instead.
		w := req.Work
		key := strings.Join([]string{"steward-claim", w.Remote, Fold(w.Org), Fold(w.Repo), Fold(string(w.Kind)), itoa(w.Number)}, "\x1f")
		if _, err := tx.exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended(?, 0))`, key); err != nil {
			return Outcome{}, false, err
		}
	}
	// Wait out any transition in flight on the item's active lease (its row lock) first:
	// the claim then judges the holder as that transition left it. (The lease's own times
	// are read later, right before the statement that writes it: see below.)
	cond, args := itemIdentity(pgSQL, req.Work)
	activeOfItem := "WHERE work_item_id IN (SELECT work_item_id FROM work_items WHERE " + cond + ") AND " + pgSQL.fold("status") + " = 'active'"
	if _, err := tx.exec(ctx, "SELECT lease_id FROM leases "+activeOfItem+" FOR UPDATE", args...); err != nil {
		return Outcome{}, false, err
	}
	now, err := dbClock(ctx, tx.tx, s.path)
	if err != nil {
		return Outcome{}, false, err
	}
	ss := req.Session
	if err := s.upsertSession(ctx, tx, ss, now); err != nil {
		return Outcome{}, false, err
	}
	itemID, err := s.workItem(ctx, tx, req.Work, req.Title)
	if err != nil {
		return Outcome{}, false, err
	}
	p := s.opt.Policies.For(req.TaskClass)
	ttl := req.TTL
	if ttl == 0 {
		ttl = p.InitialTTL()
	}
	id := req.LeaseID
	if id == "" {
		id = newID("lease-")
	}
	role, phase := req.Role, req.Phase
	if role == "" {
		role = ss.Role
	}
	if phase == "" {
		phase = PhaseAllocated
	}
	var pid any
	if req.OwnerPID > 0 {
		pid = req.OwnerPID
	}
	leaseVals := func(now time.Time) []colVal {
		exp := now.Add(ttl)
		if c, ok := p.AbsoluteCap(); ok && exp.After(now.Add(c)) {
			exp = now.Add(c)
		}
		return presentIn(s.info, "leases", []colVal{set("lease_id", id), set("work_item_id", itemID), set("session_id", ss.SessionID),
			set("role", role), set("task_class", string(p.TaskClass)), set("phase", phase), set("status", string(StatusActive)),
			set("created_at", s.timeVal("leases", "created_at", now)), set("expires_at", s.timeVal("leases", "expires_at", exp)),
			set("last_heartbeat_at", s.timeVal("leases", "last_heartbeat_at", now)), set("heartbeat_count", 0),
			set("expected_head_sha", req.ExpectedHeadSHA), set("allowed_actions", encodeList(req.AllowedActions)),
			set("forbidden_actions", encodeList(req.ForbiddenActions)), set("provenance_json", encodeObject(req.Provenance)),
			set("owner_pid", pid), set("owner_host", req.OwnerHost), set("worktree_path", req.WorktreePath)})
	}
	for round := 0; ; round++ {
		// The lease's times are read right before the statement that writes it: a wait
		// since the clock was last read (a session's or an item's row held by another
		// transaction, a holder that ended in between) must not stamp the lease with a
		// time before another owner's release — two owners at once by the DB's own
		// timestamps (cli.TestTwoHostsOnePostgres saw it; TestPGClaimStampsAfterItsWait).
		if now, err = dbClock(ctx, tx.tx, s.path); err != nil {
			return Outcome{}, false, err
		}
		won, err := s.insertLease(ctx, tx, req.Work, itemID, leaseVals(now))
		if err != nil {
			return Outcome{}, false, err
		}
		if won {
			break
		}
		// The item is held: name the holder as SQLite's claim does. Read at a new
		// statement snapshot, it is the lease that won (READ COMMITTED).
		held, err := leasesWhereInfo(ctx, tx, s.info, activeOfItem, args...)
		if err != nil {
			return Outcome{}, false, err
		}
		v, holder, past := CheckClaim(held, ss.SessionID, now)
		if v.OK {
			if round+1 < claimRounds {
				continue // the holder ended in between: try the conditional insert again
			}
			return Outcome{Code: CodeBusy, Message: "the item changed hands " + itoa(claimRounds) +
				" times while the claim ran; nothing was written — retry shortly"}, false, nil
		}
		out := Outcome{Code: v.Code, Message: v.Message, Lease: holder, HolderSessionID: holder.SessionID, HolderPastExpiry: past}
		if !s.eventsNameSessions() {
			return out, false, nil
		}
		ev, err := s.insertEvent(ctx, tx, itemID, "claim.refused", v.Message, ss.SessionID, map[string]any{
			"reason": string(v.Code), "requesting_session_id": ss.SessionID,
			"holding_session_id": holder.SessionID, "holding_lease_id": holder.LeaseID,
			"holding_expires_at": holder.ExpiresAt.Raw, "holder_past_expiry": past,
		}, now)
		if err != nil {
			return Outcome{}, false, err
		}
		out.EventIDs = eventIDs(ev)
		c := Change{WorkItemIDs: []int64{itemID}, SessionIDs: []string{ss.SessionID}, EventIDs: out.EventIDs}
		return out, true, s.notify(ctx, tx, c)
	}
	if s.has("assignments", "assignment_id") {
		if _, err := s.insert(ctx, tx, "assignments", []colVal{set("assignment_id", newID("asg-")), set("lease_id", id),
			set("session_id", ss.SessionID), set("work_item_id", itemID), set("role", role),
			set("created_at", s.timeVal("assignments", "created_at", now)), set("status", string(StatusActive))}, "", "", nil); err != nil {
			return Outcome{}, false, err
		}
	}
	l, err := s.leaseInTx(ctx, tx, id)
	if err != nil {
		return Outcome{}, false, err
	}
	if l == nil {
		return Outcome{}, false, &DBError{Op: "claim", Path: s.path, Err: ErrPostgres, Detail: "lease " + id + " not read back"}
	}
	ev, err := s.insertEvent(ctx, tx, itemID, "lease.claim", "lease claimed", ss.SessionID,
		map[string]any{"lease_id": id, "task_class": string(p.TaskClass), "expires_at": l.ExpiresAt.Raw}, now)
	if err != nil {
		return Outcome{}, false, err
	}
	out := Outcome{Code: CodeOK, Message: "lease " + id + " claimed", Lease: l, EventIDs: eventIDs(ev)}
	c := Change{EventIDs: out.EventIDs}
	c.add(l)
	return out, false, s.notify(ctx, tx, c)
}

// insertLease is the claim's one conditional statement: the lease row is written only
// when no lease on the item (under any spelling of its identity, its status in any case)
// is active, and — on steward's schema — ON CONFLICT on leases_one_active_per_item lets
// only one of two racing claims write it. The new lease_generation_id is the item's
// highest plus one (the seed's monotonic fencing token), computed in the statement.
// won reports whether the row was written.
func (s *PGStore) insertLease(ctx context.Context, tx pgTx, w WorkRef, itemID int64, vals []colVal) (won bool, err error) {
	cols := make([]string, 0, len(vals)+1)
	exprs := make([]string, 0, len(vals)+1)
	args := make([]any, 0, len(vals)+8)
	for _, v := range vals {
		cols = append(cols, v.col)
		// An INSERT ... SELECT does not type its parameters from the target columns.
		exprs = append(exprs, "CAST(? AS "+s.info.cols["leases"][v.col]+")")
		args = append(args, v.val)
	}
	ret := "lease_id"
	if s.has("leases", "lease_generation_id") {
		cols = append(cols, "lease_generation_id")
		exprs = append(exprs, "(SELECT coalesce(max(lease_generation_id), 0) + 1 FROM leases WHERE work_item_id = ?)")
		args = append(args, itemID)
		ret = "lease_generation_id"
	}
	cond, idArgs := itemIdentity(pgSQL, w)
	q := "INSERT INTO leases (" + strings.Join(cols, ", ") + ") SELECT " + strings.Join(exprs, ", ") +
		" WHERE NOT EXISTS (SELECT 1 FROM leases WHERE work_item_id IN (SELECT work_item_id FROM work_items WHERE " + cond +
		") AND " + pgSQL.fold("status") + " = 'active')"
	args = append(args, idArgs...)
	if s.steward {
		q += " ON CONFLICT (work_item_id) WHERE status = 'active' DO NOTHING"
	}
	var got any
	err = tx.QueryRowContext(ctx, q+" RETURNING "+ret, args...).Scan(&got)
	if err == sql.ErrNoRows {
		return false, nil
	}
	return err == nil, err
}

// upsertSession registers the claiming session as the seed's upsert_session does (see
// SQLiteStore.upsertSession): an UPDATE, else an INSERT that yields to a concurrent one.
func (s *PGStore) upsertSession(ctx context.Context, tx pgTx, ss SessionInfo, now time.Time) error {
	var pid any
	if ss.PID > 0 {
		pid = ss.PID
	}
	ts := s.timeVal("sessions", "last_heartbeat_at", now)
	vals := []colVal{set("role", ss.Role), set("profile", ss.Profile), set("pid", pid), set("host", ss.Host),
		set("controller_instance_id", ss.ControllerInstanceID), set("status", string(StatusActive)),
		set("last_heartbeat_at", ts)}
	upd := append(vals[:len(vals):len(vals)], set("ended_at", nil))
	for range 2 {
		n, err := s.update(ctx, tx, "sessions", upd, "WHERE session_id = ?", ss.SessionID)
		if err != nil || n > 0 {
			return err
		}
		ins := append(vals[:len(vals):len(vals)], set("session_id", ss.SessionID),
			set("started_at", s.timeVal("sessions", "started_at", now)))
		wrote, err := s.insert(ctx, tx, "sessions", ins, " ON CONFLICT DO NOTHING", "", nil)
		if err != nil || wrote {
			return err
		}
	}
	return nil
}

// workItem finds the work item by its identity or inserts it, and returns its id (see
// SQLiteStore.workItem). Of two claims inserting a new item at once, one writes it and
// the other reads it: steward's unique index work_items_identity, or on another's DB the
// claim's advisory lock.
func (s *PGStore) workItem(ctx context.Context, tx pgTx, w WorkRef, title string) (int64, error) {
	cond, args := itemIdentity(pgSQL, w)
	for range 2 {
		var id sql.NullInt64
		err := tx.QueryRowContext(ctx, `SELECT work_item_id FROM work_items WHERE `+cond+` ORDER BY work_item_id LIMIT 1`,
			args...).Scan(&id)
		switch {
		case err == nil && id.Valid:
			if title != "" && s.has("work_items", "title") {
				if _, err := tx.exec(ctx, `UPDATE work_items SET title = ? WHERE work_item_id = ? AND title IS DISTINCT FROM ?`,
					title, id.Int64, title); err != nil {
					return 0, err
				}
			}
			return id.Int64, nil
		case err != nil && err != sql.ErrNoRows:
			return 0, err
		}
		wrote, err := s.insert(ctx, tx, "work_items", []colVal{set("remote", w.Remote), set("org", w.Org), set("repo", w.Repo),
			set("work_kind", string(w.Kind)), set("work_number", w.Number), set("title", title)},
			" ON CONFLICT DO NOTHING", "work_item_id", &id)
		if err != nil {
			return 0, err
		}
		if wrote {
			if !id.Valid {
				return 0, &DBError{Op: "claim", Path: s.path, Err: ErrPostgres, Detail: "work_items.work_item_id is not assigned by the DB"}
			}
			return id.Int64, nil
		}
	}
	return 0, &DBError{Op: "claim", Path: s.path, Err: ErrPostgres, Detail: "work item neither found nor written"}
}
