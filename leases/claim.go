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
func (s *Store) Claim(ctx context.Context, req ClaimRequest, now time.Time) (Outcome, error) {
	if msg := req.validate(); msg != "" {
		return Outcome{Code: CodeInvalidRequest, Message: msg}, nil
	}
	return s.run(ctx, "claim", func(ctx context.Context, tx *sql.Tx) (Outcome, bool, error) {
		return s.claimTx(ctx, tx, req, now)
	})
}

func (s *Store) claimTx(ctx context.Context, tx *sql.Tx, req ClaimRequest, now time.Time) (Outcome, bool, error) {
	ts := FormatTime(now)
	ss := req.Session
	if _, err := tx.ExecContext(ctx, `INSERT INTO sessions(session_id, role, profile, pid, host,
		controller_instance_id, status, started_at, last_heartbeat_at)
		VALUES(?, ?, ?, ?, ?, ?, 'active', ?, ?)
		ON CONFLICT(session_id) DO UPDATE SET role = excluded.role, profile = excluded.profile,
		pid = excluded.pid, host = excluded.host, controller_instance_id = excluded.controller_instance_id,
		status = 'active', last_heartbeat_at = excluded.last_heartbeat_at, ended_at = NULL`,
		ss.SessionID, ss.Role, ss.Profile, ss.PID, ss.Host, ss.ControllerInstanceID, ts, ts); err != nil {
		return Outcome{}, false, err
	}
	w := req.Work
	var itemID int64
	if err := tx.QueryRowContext(ctx, `INSERT INTO work_items(remote, org, repo, work_kind, work_number, title)
		VALUES(?, ?, ?, ?, ?, ?)
		ON CONFLICT(remote, org, repo, work_kind, work_number)
		DO UPDATE SET title = CASE WHEN excluded.title <> '' THEN excluded.title ELSE work_items.title END
		RETURNING work_item_id`, w.Remote, w.Org, w.Repo, string(w.Kind), w.Number, req.Title).Scan(&itemID); err != nil {
		return Outcome{}, false, err
	}
	held, err := leasesWhereInfo(ctx, tx, s.info, "WHERE work_item_id = ? AND status = 'active'", itemID)
	if err != nil {
		return Outcome{}, false, err
	}
	if v, holder, past := CheckClaim(held, ss.SessionID, now); !v.OK {
		out := Outcome{Code: v.Code, Message: v.Message, Lease: holder,
			HolderSessionID: holder.SessionID, HolderPastExpiry: past}
		id, err := insertEvent(ctx, tx, itemID, "claim.refused", v.Message, ss.SessionID, map[string]any{
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
	if _, err := tx.ExecContext(ctx, `INSERT INTO leases(lease_id, work_item_id, session_id, role,
		task_class, phase, status, created_at, expires_at, last_heartbeat_at, heartbeat_count,
		expected_head_sha, allowed_actions, forbidden_actions, provenance_json, owner_pid, owner_host,
		worktree_path) VALUES(?, ?, ?, ?, ?, ?, 'active', ?, ?, ?, 0, ?, ?, ?, ?, ?, ?, ?)`,
		id, itemID, ss.SessionID, role, string(p.TaskClass), phase, ts, FormatTime(exp), ts,
		req.ExpectedHeadSHA, encodeList(req.AllowedActions), encodeList(req.ForbiddenActions),
		encodeObject(req.Provenance), pid, req.OwnerHost, req.WorktreePath); err != nil {
		return Outcome{}, false, err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO assignments(assignment_id, lease_id, session_id,
		work_item_id, role, created_at, status) VALUES(?, ?, ?, ?, ?, ?, 'active')`,
		newID("asg-"), id, ss.SessionID, itemID, role, ts); err != nil {
		return Outcome{}, false, err
	}
	ev, err := insertEvent(ctx, tx, itemID, "lease.claim", "lease claimed", ss.SessionID,
		map[string]any{"lease_id": id, "task_class": string(p.TaskClass), "expires_at": FormatTime(exp)}, now)
	if err != nil {
		return Outcome{}, false, err
	}
	l, err := s.leaseInTx(ctx, tx, id)
	if err != nil {
		return Outcome{}, false, err
	}
	return Outcome{Code: CodeOK, Message: "lease " + id + " claimed", Lease: l, EventIDs: []int64{ev}}, false, nil
}
