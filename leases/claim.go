package leases

import (
	"context"
	"database/sql"
	"strings"
	"time"

	"steward/leases/leaserec"
)

// SessionInfo identifies the session that claims (upserted into sessions).
type SessionInfo struct {
	SessionID            string
	Role                 string
	Profile              string
	PID                  int64
	Host                 string
	ControllerInstanceID string
}

// ClaimRequest is an assign-and-lease request.
type ClaimRequest struct {
	Session SessionInfo
	Work    leaserec.WorkRef
	Title   string // work item title, kept when empty
	// Role is the lease role (default Session.Role).
	Role      string
	TaskClass leaserec.TaskClass
	Phase     string // default PhaseAllocated
	// TTL overrides the policy's initial TTL when non-zero; a negative TTL
	// creates an already-expired lease (fixtures, as the seed's tests do).
	TTL              time.Duration
	ExpectedHeadSHA  string
	AllowedActions   []string
	ForbiddenActions []string
	Provenance       map[string]any
	WorktreePath     string
	OwnerPID         int64
	OwnerHost        string
	// LeaseID is generated ("lease-<hex>") when empty.
	LeaseID string
}

func (r ClaimRequest) validate() string {
	var miss []string
	if r.Session.SessionID == "" {
		miss = append(miss, "session id")
	}
	if r.Work.Remote == "" || r.Work.Org == "" || r.Work.Repo == "" {
		miss = append(miss, "remote/org/repo")
	}
	if r.Work.Kind != leaserec.KindIssue && r.Work.Kind != leaserec.KindPR {
		miss = append(miss, "work kind issue|pr")
	}
	if r.Work.Number <= 0 {
		miss = append(miss, "work number > 0")
	}
	if len(miss) == 0 {
		return ""
	}
	return "claim needs " + strings.Join(miss, ", ") + "; fix the request"
}

// claimRounds bounds how often a claim re-runs its conditional INSERT within one
// transaction when the holder that blocked it ended before it could be named.
const claimRounds = 3

// Claim assigns and leases the work item to the requesting session in one transaction:
// upsert the session and the work item; if any active lease holds the item, refuse
// (claimed_by_other_session, or already_held for the same session) and commit a
// claim.refused event naming both sessions; otherwise insert the lease, its assignment
// and a lease.claim event.
//
// The lease is written by one conditional statement (insertLease), which on PostgreSQL
// is what decides a race between claims on many hosts; before it the claim waits out
// any transition in flight on the item's active lease (its row lock), and on a DB
// steward did not create takes the item's advisory lock. On SQLite BEGIN IMMEDIATE has
// already serialised the claim with every other writer. now is the caller's clock on
// SQLite; PostgreSQL's claim stamps its rows with the server's.
func (w *writes) Claim(ctx context.Context, req ClaimRequest, now time.Time) (Outcome, error) {
	if msg := req.validate(); msg != "" {
		return Outcome{Code: CodeInvalidRequest, Message: msg}, nil
	}
	if v := schemaVerdict(w.info, OpClaim); !v.OK {
		return Outcome{Code: v.Code, Message: v.Message}, nil
	}
	return w.run(ctx, "claim", func(ctx context.Context, tx wtx) (Outcome, bool, error) {
		return w.claimTx(ctx, tx, req, now)
	})
}

func (w *writes) claimTx(ctx context.Context, tx wtx, req ClaimRequest, now time.Time) (Outcome, bool, error) {
	if !w.steward {
		// No index of steward's refuses a second owner or a second row of the item on a
		// DB steward did not create: steward's claims of one item take turns instead.
		wr := req.Work
		key := strings.Join([]string{"steward-claim", wr.Remote, leaserec.Fold(wr.Org), leaserec.Fold(wr.Repo),
			leaserec.Fold(string(wr.Kind)),
			itoa(wr.Number)}, "\x1f")
		if err := w.lock(ctx, tx, `SELECT pg_advisory_xact_lock(hashtextextended(?, 0))`, key); err != nil {
			return Outcome{}, false, err
		}
	}
	// Every row of the item counts: one the DB holds under another spelling of the org or
	// repo (written before identities were folded, or by the supervised system) too.
	// Wait out any transition in flight on the item's active lease (its row lock) first:
	// the claim then judges the holder as that transition left it. (The lease's own times
	// are read later, right before the statement that writes it: see below.)
	cond, args := itemIdentity(w.info.dialect, req.Work)
	activeOfItem := "WHERE work_item_id IN (SELECT work_item_id FROM work_items WHERE " + cond + ") AND " +
		w.info.fold("status") + " = 'active'"
	if err := w.lock(ctx, tx, "SELECT lease_id FROM leases "+activeOfItem+" FOR UPDATE", args...); err != nil {
		return Outcome{}, false, err
	}
	at, err := w.clock(ctx, tx, now)
	if err != nil {
		return Outcome{}, false, err
	}
	ss := req.Session
	if err := w.upsertSession(ctx, tx, ss, at); err != nil {
		return Outcome{}, false, err
	}
	itemID, err := w.workItem(ctx, tx, req.Work, req.Title)
	if err != nil {
		return Outcome{}, false, err
	}
	p := w.opt.Policies.For(req.TaskClass)
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
		phase = leaserec.PhaseAllocated
	}
	var pid any
	if req.OwnerPID > 0 {
		pid = req.OwnerPID
	}
	leaseVals := func(at time.Time) []colVal {
		exp := at.Add(ttl)
		if c, ok := p.AbsoluteCap(); ok && exp.After(at.Add(c)) {
			exp = at.Add(c)
		}
		return presentIn(w.info, "leases", []colVal{set("lease_id", id), set("work_item_id", itemID),
			set("session_id", ss.SessionID), set("role", role), set("task_class", string(p.TaskClass)),
			set("phase", phase), set("status", string(leaserec.StatusActive)),
			set("created_at", w.timeVal("leases", "created_at", at)), set("expires_at", w.timeVal("leases", "expires_at", exp)),
			set("last_heartbeat_at", w.timeVal("leases", "last_heartbeat_at", at)), set("heartbeat_count", 0),
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
		if at, err = w.clock(ctx, tx, now); err != nil {
			return Outcome{}, false, err
		}
		won, err := w.insertLease(ctx, tx, req.Work, itemID, leaseVals(at))
		if err != nil {
			return Outcome{}, false, err
		}
		if won {
			break
		}
		// The item is held: name the holder. On PostgreSQL, read at a new statement
		// snapshot, it is the lease that won (READ COMMITTED).
		held, err := leasesWhereInfo(ctx, tx, w.info, activeOfItem, args...)
		if err != nil {
			return Outcome{}, false, err
		}
		v, holder, past := CheckClaim(held, ss.SessionID, at)
		if v.OK {
			if round+1 < claimRounds {
				continue // the holder ended in between: try the conditional insert again
			}
			return Outcome{Code: CodeBusy, Message: "the item changed hands " + itoa(claimRounds) +
				" times while the claim ran; nothing was written — retry shortly"}, false, nil
		}
		out := Outcome{Code: v.Code, Message: v.Message, Lease: holder, HolderSessionID: holder.SessionID,
			HolderPastExpiry: past}
		if !w.eventsNameSessions() {
			// The seed's events record no session: a refusal event could not say who asked
			// and who holds the item, so nothing is written (the audit log keeps the refusal).
			return out, false, nil
		}
		ev, err := w.insertEvent(ctx, tx, itemID, "claim.refused", v.Message, ss.SessionID, map[string]any{
			"reason": string(v.Code), "requesting_session_id": ss.SessionID,
			"holding_session_id": holder.SessionID, "holding_lease_id": holder.LeaseID,
			"holding_expires_at": holder.ExpiresAt.Raw, "holder_past_expiry": past,
		}, at)
		if err != nil {
			return Outcome{}, false, err
		}
		out.EventIDs = eventIDs(ev)
		c := change{WorkItemIDs: []int64{itemID}, SessionIDs: []string{ss.SessionID}, EventIDs: out.EventIDs}
		return out, true, w.notify(ctx, tx, c)
	}
	if w.has("assignments", "assignment_id") {
		if _, err := w.insert(ctx, tx, "assignments", []colVal{set("assignment_id", newID("asg-")), set("lease_id", id),
			set("session_id", ss.SessionID), set("work_item_id", itemID), set("role", role),
			set("created_at", w.timeVal("assignments", "created_at", at)), set("status", string(leaserec.StatusActive))},
			"", "", nil); err != nil {
			return Outcome{}, false, err
		}
	}
	l, err := w.leaseInTx(ctx, tx, id)
	if err != nil {
		return Outcome{}, false, err
	}
	if l == nil {
		return Outcome{}, false, &DBError{Op: "claim", Path: w.path, Err: w.failure(),
			Detail: "lease " + id + " not read back"}
	}
	ev, err := w.insertEvent(ctx, tx, itemID, "lease.claim", "lease claimed", ss.SessionID,
		map[string]any{"lease_id": id, "task_class": string(p.TaskClass), "expires_at": l.ExpiresAt.Raw}, at)
	if err != nil {
		return Outcome{}, false, err
	}
	out := Outcome{Code: CodeOK, Message: "lease " + id + " claimed", Lease: l, EventIDs: eventIDs(ev)}
	c := change{EventIDs: out.EventIDs}
	c.add(l)
	return out, false, w.notify(ctx, tx, c)
}

// insertLease is the claim's one conditional statement: the lease row is written only
// when no lease on the item (under any spelling of its identity, its status in any case)
// is active, and — on steward's schema — ON CONFLICT on leases_one_active_per_item lets
// only one of two racing claims write it. The new lease_generation_id is the item's
// highest plus one (the seed's monotonic fencing token), computed in the statement.
// won reports whether the row was written.
func (w *writes) insertLease(ctx context.Context, tx wtx, wr leaserec.WorkRef, itemID int64,
	vals []colVal) (won bool, err error) {
	cols := make([]string, 0, len(vals)+1)
	exprs := make([]string, 0, len(vals)+1)
	args := make([]any, 0, len(vals)+8)
	for _, v := range vals {
		cols = append(cols, v.col)
		if w.info.pg {
			// An INSERT ... SELECT does not type its parameters from the target columns.
			exprs = append(exprs, "CAST(? AS "+w.info.cols["leases"][v.col]+")")
		} else {
			exprs = append(exprs, "?")
		}
		args = append(args, v.val)
	}
	ret := "lease_id"
	if w.has("leases", "lease_generation_id") {
		cols = append(cols, "lease_generation_id")
		exprs = append(exprs, "(SELECT coalesce(max(lease_generation_id), 0) + 1 FROM leases WHERE work_item_id = ?)")
		args = append(args, itemID)
		ret = "lease_generation_id"
	}
	cond, idArgs := itemIdentity(w.info.dialect, wr)
	q := "INSERT INTO leases (" + strings.Join(cols, ", ") + ") SELECT " + strings.Join(exprs, ", ") +
		" WHERE NOT EXISTS (SELECT 1 FROM leases WHERE work_item_id IN (SELECT work_item_id FROM work_items WHERE " + cond +
		") AND " + w.info.fold("status") + " = 'active')"
	args = append(args, idArgs...)
	if w.steward {
		q += " ON CONFLICT (work_item_id) WHERE status = 'active' DO NOTHING"
	}
	var got any
	err = tx.QueryRowContext(ctx, q+" RETURNING "+ret, args...).Scan(&got)
	if err == sql.ErrNoRows {
		return false, nil
	}
	return err == nil, err
}

// upsertSession registers the claiming session as the seed's upsert_session does: the row
// is made active with this process's pid and a fresh heartbeat (only the columns the
// sessions table has are written) — an UPDATE, else an INSERT that yields to a
// concurrent one.
func (w *writes) upsertSession(ctx context.Context, tx wtx, ss SessionInfo, now time.Time) error {
	var pid any
	if ss.PID > 0 {
		pid = ss.PID
	}
	ts := w.timeVal("sessions", "last_heartbeat_at", now)
	vals := []colVal{set("role", ss.Role), set("profile", ss.Profile), set("pid", pid), set("host", ss.Host),
		set("controller_instance_id", ss.ControllerInstanceID), set("status", string(leaserec.StatusActive)),
		set("last_heartbeat_at", ts)}
	upd := append(vals[:len(vals):len(vals)], set("ended_at", nil))
	for range 2 {
		n, err := w.update(ctx, tx, "sessions", upd, "WHERE session_id = ?", ss.SessionID)
		if err != nil || n > 0 {
			return err
		}
		ins := append(vals[:len(vals):len(vals)], set("session_id", ss.SessionID),
			set("started_at", w.timeVal("sessions", "started_at", now)))
		wrote, err := w.insert(ctx, tx, "sessions", ins, " ON CONFLICT DO NOTHING", "", nil)
		if err != nil || wrote {
			return err
		}
	}
	return nil
}

// workItem finds the work item by its identity (itemIdentity: org and repo
// case-insensitive, the work kind compared as the seed compares it, Fold: "Issue" is an
// issue) — or inserts it, and returns its id. A non-empty title replaces the recorded
// one. Of two PostgreSQL claims inserting a new item at once, one writes it and the other
// reads it: steward's unique index work_items_identity, or on another's DB the claim's
// advisory lock.
func (w *writes) workItem(ctx context.Context, tx wtx, wr leaserec.WorkRef, title string) (int64, error) {
	cond, args := itemIdentity(w.info.dialect, wr)
	for range 2 {
		var id sql.NullInt64
		err := tx.QueryRowContext(ctx, `SELECT work_item_id FROM work_items WHERE `+cond+` ORDER BY work_item_id LIMIT 1`,
			args...).Scan(&id)
		switch {
		case err == nil && id.Valid:
			if title != "" && w.has("work_items", "title") {
				if _, err := tx.exec(ctx, `UPDATE work_items SET title = ? WHERE work_item_id = ? AND title IS DISTINCT FROM ?`,
					title, id.Int64, title); err != nil {
					return 0, err
				}
			}
			return id.Int64, nil
		case err != nil && err != sql.ErrNoRows:
			return 0, err
		}
		wrote, err := w.insert(ctx, tx, "work_items", []colVal{set("remote", wr.Remote), set("org", wr.Org),
			set("repo", wr.Repo), set("work_kind", string(wr.Kind)), set("work_number", wr.Number), set("title", title)},
			" ON CONFLICT DO NOTHING", "work_item_id", &id)
		if err != nil {
			return 0, err
		}
		if wrote {
			if !id.Valid {
				return 0, &DBError{Op: "claim", Path: w.path, Err: w.failure(),
					Detail: "work_items.work_item_id is not assigned by the DB"}
			}
			return id.Int64, nil
		}
	}
	return 0, &DBError{Op: "claim", Path: w.path, Err: w.failure(), Detail: "work item neither found nor written"}
}
