package leases

import (
	"context"
	"database/sql"
	"strings"
	"time"
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
	Work    WorkRef
	Title   string // work item title, kept when empty
	// Role is the lease role (default Session.Role).
	Role      string
	TaskClass TaskClass
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
	if r.Work.Kind != KindIssue && r.Work.Kind != KindPR {
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

// Claim assigns and leases the work item to the requesting session in one
// BEGIN IMMEDIATE transaction: upsert the session and the work item; if any
// active lease holds the item, refuse (claimed_by_other_session, or
// already_held for the same session) and commit a claim.refused event naming
// both sessions; otherwise insert the lease, its assignment and a
// lease.claim event.
func (s *SQLiteStore) Claim(ctx context.Context, req ClaimRequest, now time.Time) (Outcome, error) {
	if msg := req.validate(); msg != "" {
		return Outcome{Code: CodeInvalidRequest, Message: msg}, nil
	}
	return s.run(ctx, "claim", func(ctx context.Context, tx *sql.Tx) (Outcome, bool, error) {
		return s.claimTx(ctx, tx, req, now)
	})
}

func (s *SQLiteStore) claimTx(ctx context.Context, tx *sql.Tx, req ClaimRequest, now time.Time) (Outcome, bool, error) {
	if v := schemaVerdict(s.info, OpClaim); !v.OK {
		return Outcome{Code: v.Code, Message: v.Message}, false, nil
	}
	ts := s.ts(now)
	ss := req.Session
	if err := s.upsertSession(ctx, tx, ss, ts); err != nil {
		return Outcome{}, false, err
	}
	itemID, err := s.workItem(ctx, tx, req.Work, req.Title)
	if err != nil {
		return Outcome{}, false, err
	}
	// Every row of the item counts: one the DB holds under another spelling of the org or
	// repo (written before identities were folded, or by the supervised system) too.
	cond, args := itemIdentity(sqliteSQL, req.Work)
	held, err := leasesWhereInfo(ctx, tx, s.info, "WHERE work_item_id IN (SELECT work_item_id FROM work_items WHERE "+cond+") AND "+foldSQL("status")+" = 'active'", args...)
	if err != nil {
		return Outcome{}, false, err
	}
	if v, holder, past := CheckClaim(held, ss.SessionID, now); !v.OK {
		out := Outcome{Code: v.Code, Message: v.Message, Lease: holder,
			HolderSessionID: holder.SessionID, HolderPastExpiry: past}
		if !s.eventsNameSessions() {
			// The seed's events record no session: a refusal event could not say who asked
			// and who holds the item, so nothing is written (the audit log keeps the refusal).
			return out, false, nil
		}
		id, err := s.insertEvent(ctx, tx, itemID, "claim.refused", v.Message, ss.SessionID, map[string]any{
			"reason": string(v.Code), "requesting_session_id": ss.SessionID,
			"holding_session_id": holder.SessionID, "holding_lease_id": holder.LeaseID,
			"holding_expires_at": holder.ExpiresAt.Raw, "holder_past_expiry": past,
		}, now)
		if err != nil {
			return Outcome{}, false, err
		}
		out.EventIDs = []int64{id}
		return out, true, nil
	}
	p := s.opt.Policies.For(req.TaskClass)
	ttl := req.TTL
	if ttl == 0 {
		ttl = p.InitialTTL()
	}
	exp := now.Add(ttl)
	if c, ok := p.AbsoluteCap(); ok && exp.After(now.Add(c)) {
		exp = now.Add(c)
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
	vals := []colVal{set("lease_id", id), set("work_item_id", itemID), set("session_id", ss.SessionID),
		set("role", role), set("task_class", string(p.TaskClass)), set("phase", phase), set("status", string(StatusActive)),
		set("created_at", ts), set("expires_at", s.ts(exp)), set("last_heartbeat_at", ts), set("heartbeat_count", 0),
		set("expected_head_sha", req.ExpectedHeadSHA), set("allowed_actions", encodeList(req.AllowedActions)),
		set("forbidden_actions", encodeList(req.ForbiddenActions)), set("provenance_json", encodeObject(req.Provenance)),
		set("owner_pid", pid), set("owner_host", req.OwnerHost), set("worktree_path", req.WorktreePath)}
	if s.has("leases", "lease_generation_id") {
		// The seed's fencing counter is monotonic per work item: a new lease on the item
		// takes the next generation, so a writer fenced on an older one is refused.
		vals = append(vals, setExpr("lease_generation_id",
			"(SELECT coalesce(max(lease_generation_id), 0) + 1 FROM leases WHERE work_item_id = "+itoa(itemID)+")"))
	}
	if err := s.insert(ctx, tx, "leases", vals, "", nil); err != nil {
		return Outcome{}, false, err
	}
	if s.has("assignments", "assignment_id") {
		if err := s.insert(ctx, tx, "assignments", []colVal{set("assignment_id", newID("asg-")), set("lease_id", id),
			set("session_id", ss.SessionID), set("work_item_id", itemID), set("role", role), set("created_at", ts),
			set("status", string(StatusActive))}, "", nil); err != nil {
			return Outcome{}, false, err
		}
	}
	ev, err := s.insertEvent(ctx, tx, itemID, "lease.claim", "lease claimed", ss.SessionID,
		map[string]any{"lease_id": id, "task_class": string(p.TaskClass), "expires_at": s.ts(exp)}, now)
	if err != nil {
		return Outcome{}, false, err
	}
	l, err := s.leaseInTx(ctx, tx, id)
	if err != nil {
		return Outcome{}, false, err
	}
	out := Outcome{Code: CodeOK, Message: "lease " + id + " claimed", Lease: l}
	if ev > 0 {
		out.EventIDs = []int64{ev}
	}
	return out, false, nil
}

// upsertSession registers the claiming session as the seed's upsert_session does: the row
// is made active with this process's pid and a fresh heartbeat (only the columns the
// sessions table has are written).
func (s *SQLiteStore) upsertSession(ctx context.Context, tx *sql.Tx, ss SessionInfo, ts string) error {
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM sessions WHERE session_id = ?`, ss.SessionID).Scan(&n); err != nil {
		return err
	}
	var pid any
	if ss.PID > 0 {
		pid = ss.PID
	}
	vals := []colVal{set("role", ss.Role), set("profile", ss.Profile), set("pid", pid), set("host", ss.Host),
		set("controller_instance_id", ss.ControllerInstanceID), set("status", string(StatusActive)),
		set("last_heartbeat_at", ts)}
	if n > 0 {
		_, err := s.update(ctx, tx, "sessions", append(vals, set("ended_at", nil)), "WHERE session_id = ?", ss.SessionID)
		return err
	}
	return s.insert(ctx, tx, "sessions", append(vals, set("session_id", ss.SessionID), set("started_at", ts)), "", nil)
}

// workItem finds the work item by its identity (itemIdentity: org and repo
// case-insensitive, the work kind compared as the seed compares it, Fold: "Issue" is an
// issue) — or inserts it, and returns its id. A
// non-empty title replaces the recorded one.
func (s *SQLiteStore) workItem(ctx context.Context, tx *sql.Tx, w WorkRef, title string) (int64, error) {
	var id sql.NullInt64
	cond, args := itemIdentity(sqliteSQL, w)
	err := tx.QueryRowContext(ctx, `SELECT work_item_id FROM work_items WHERE `+cond+`
		ORDER BY work_item_id LIMIT 1`, args...).Scan(&id)
	switch {
	case err == nil && id.Valid:
		if title != "" {
			if _, err := s.update(ctx, tx, "work_items", []colVal{set("title", title)}, "WHERE work_item_id = ?", id.Int64); err != nil {
				return 0, err
			}
		}
		return id.Int64, nil
	case err != nil && err != sql.ErrNoRows:
		return 0, err
	}
	if err := s.insert(ctx, tx, "work_items", []colVal{set("remote", w.Remote), set("org", w.Org), set("repo", w.Repo),
		set("work_kind", string(w.Kind)), set("work_number", w.Number), set("title", title)},
		"work_item_id", &id); err != nil {
		return 0, err
	}
	if !id.Valid {
		return 0, &DBError{Op: "claim", Path: s.path, Err: ErrSQLite, Detail: "work_items.work_item_id is not assigned by the DB"}
	}
	return id.Int64, nil
}
