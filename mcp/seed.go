package mcp

import (
	"cmp"
	"context"
	"strconv"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"steward/govern"
	"steward/govern/actionid"
	"steward/reponame"
)

// The seed's control plane names tools for the same jobs (seed-digest-1 §2.7-2.8, §3.2, §4,
// §5.4; seed 002 "MCP tool list"). steward serves them beside its own names, with the
// seed's argument names, so a worker written for the seed's server can switch. Each takes
// session_id besides (steward's identity is explicit on every call) and returns steward's
// results.
const (
	SeedLockIssue        = "gitea_lock_issue"
	SeedAllocateNextWork = "gitea_allocate_next_work"
	SeedHeartbeatLock    = "gitea_heartbeat_issue_lock"
	SeedReleaseLease     = "gitea_release_workflow_lease"
	SeedInspectContract  = "gitea_inspect_issue_lock_contract"
	SeedInspectLease     = "gitea_inspect_workflow_lease"
)

// LockIssueArgs are gitea_lock_issue's arguments: the seed's lock builder's
// (issue_number, branch_name, worktree_path, remote; seed-digest-1 §2.1-2.2).
type LockIssueArgs struct {
	SessionID    string `json:"session_id,omitempty" mcp:"required"`
	IssueNumber  int64  `json:"issue_number,omitempty" mcp:"required"`
	BranchName   string `json:"branch_name,omitempty"`
	WorktreePath string `json:"worktree_path,omitempty"`
	Remote       string `json:"remote,omitempty"`
	Org          string `json:"org,omitempty"`
	Repo         string `json:"repo,omitempty"`
	Username     string `json:"username,omitempty"`
	ProfileName  string `json:"profile_name,omitempty"`
	PID          int64  `json:"pid,omitempty"`
	RequestID    string `json:"request_id,omitempty"`
}

// AllocateArgs are gitea_allocate_next_work's arguments (the seed's allocate_next_work;
// seed-digest-1 §5.4, seed-digest-4 §4).
type AllocateArgs struct {
	SessionID           string  `json:"session_id,omitempty" mcp:"required"`
	Role                string  `json:"role,omitempty"`
	Remote              string  `json:"remote,omitempty"`
	Org                 string  `json:"org,omitempty"`
	Repo                string  `json:"repo,omitempty"`
	ProfileName         string  `json:"profile_name,omitempty"`
	Username            string  `json:"username,omitempty"`
	Apply               bool    `json:"apply,omitempty"`
	SideEffectFree      bool    `json:"side_effect_free,omitempty"`
	ExcludeIssueNumbers []int64 `json:"exclude_issue_numbers,omitempty"`
	LeaseTTLSeconds     int64   `json:"lease_ttl_seconds,omitempty"`
	PID                 int64   `json:"pid,omitempty"`
	RequestID           string  `json:"request_id,omitempty"`
}

// HeartbeatLockArgs are gitea_heartbeat_issue_lock's arguments: the issue and the
// task_session_id its lock was minted with (the seed's fencing token, seed-digest-1 §2.8).
type HeartbeatLockArgs struct {
	SessionID      string `json:"session_id,omitempty" mcp:"required"`
	IssueNumber    int64  `json:"issue_number,omitempty" mcp:"required"`
	TaskSessionID  string `json:"task_session_id,omitempty" mcp:"required"`
	Remote         string `json:"remote,omitempty"`
	Org            string `json:"org,omitempty"`
	Repo           string `json:"repo,omitempty"`
	LockGeneration int64  `json:"lock_generation,omitempty"`
	ExpiresAt      string `json:"expires_at,omitempty"`
	ClaimToken     string `json:"claim_token,omitempty"`
	RequestID      string `json:"request_id,omitempty"`
}

// ReleaseLeaseArgs are gitea_release_workflow_lease's arguments (lease_id; seed 002 names
// the tool, its lease tools take lease_id).
type ReleaseLeaseArgs struct {
	SessionID      string `json:"session_id,omitempty" mcp:"required"`
	LeaseID        string `json:"lease_id,omitempty" mcp:"required"`
	ExpiresAt      string `json:"expires_at,omitempty"`
	LockGeneration int64  `json:"lock_generation,omitempty"`
	TaskSessionID  string `json:"task_session_id,omitempty"`
	ClaimToken     string `json:"claim_token,omitempty"`
	RequestID      string `json:"request_id,omitempty"`
}

// InspectLeaseArgs are gitea_inspect_workflow_lease's arguments.
type InspectLeaseArgs struct {
	SessionID  string `json:"session_id,omitempty" mcp:"required"`
	LeaseID    string `json:"lease_id,omitempty" mcp:"required"`
	ClaimToken string `json:"claim_token,omitempty"`
}

func (s *Server) registerSeedNames() {
	addTool(
		s,
		&sdk.Tool{Name: SeedLockIssue, Annotations: additive, Description: "The seed's name for claim of a named issue: " +
			"a lease and a canonical #953 lock in one fenced step. Returns the fence (task_session_id, lock_generation) to " +
			"heartbeat with."},
		s.lockIssue,
	)
	addTool(
		s,
		&sdk.Tool{
			Name:        SeedAllocateNextWork,
			Annotations: additive,
			Description: "The seed's allocator: select the next runnable issue by the allocation order; " +
				"apply=false (default) is a dry run that writes nothing, apply=true claims it.",
		},
		s.allocate,
	)
	addTool(
		s,
		&sdk.Tool{
			Name:        SeedHeartbeatLock,
			Annotations: renewing,
			Description: "The seed's name for heartbeat: renew your lease and lock on an issue, fenced on task_session_id.",
		},
		s.heartbeatLock,
	)
	addTool(
		s,
		&sdk.Tool{
			Name:        SeedReleaseLease,
			Annotations: ending,
			Description: "The seed's name for release: release your lease by id and archive its lock.",
		},
		s.releaseLease,
	)
	addTool(
		s,
		&sdk.Tool{
			Name:        SeedInspectContract,
			Annotations: readOnly,
			Description: "The seed's name for inspect_lock_contract (read-only).",
		},
		s.inspect,
	)
	addTool(
		s,
		&sdk.Tool{
			Name:        SeedInspectLease,
			Annotations: readOnly,
			Description: "Read one lease by id (read-only); your own lease comes with its fence.",
		},
		s.inspectLease,
	)
}

func (s *Server) lockIssue(ctx context.Context, req *sdk.CallToolRequest, a LockIssueArgs) Outcome {
	return s.claim(
		ctx,
		req,
		ClaimArgs{SessionID: a.SessionID, Item: &ItemRef{Org: a.Org, Repo: a.Repo, Number: a.IssueNumber, Remote: a.Remote},
			Branch: a.BranchName, Worktree: a.WorktreePath, Username: a.Username, Profile: a.ProfileName, PID: a.PID},
	)
}

func (s *Server) allocate(ctx context.Context, req *sdk.CallToolRequest, a AllocateArgs) Outcome {
	session, bad := s.enter(ctx, req, a.SessionID)
	if bad != nil {
		return *bad
	}
	if a.SideEffectFree && a.Apply {
		return refused(
			govern.CodeInvalidRequest,
			"side_effect_free is incompatible with apply=true; an assignment is a write (fail closed, #643)",
		)
	}
	if g := s.reads.ws.Gitea; g != nil && (a.Org != "" || a.Repo != "") {
		owner, repo := g.Repository()
		o, r := cmp.Or(a.Org, owner), cmp.Or(a.Repo, repo)
		if !reponame.SameRepo(o, r, owner, repo) {
			return refused(govern.CodeInvalidRequest, "this steward allocates from "+owner+"/"+repo+" only")
		}
	}
	if !a.Apply {
		pick, o := s.next(ctx, session, a.ExcludeIssueNumbers)
		if o != nil {
			return *o
		}
		return Outcome{
			Result:       string(govern.ResultPreviewed),
			Code:         "preview",
			Item:         &pick.item,
			Skipped:      pick.skipped,
			SkippedTotal: pick.skippedTotal,
			Message:      "dry run only (apply=false); no lease created and nothing written",
			Next: "Call again with apply=true to claim the selected item (the selection may differ by then), or " +
				"claim it by name.",
		}
	}
	var ttl string
	if a.LeaseTTLSeconds > 0 {
		ttl = (time.Duration(a.LeaseTTLSeconds) * time.Second).String()
	}
	return s.claim(ctx, req, ClaimArgs{SessionID: session, Next: true, Exclude: a.ExcludeIssueNumbers, Role: a.Role,
		Profile: a.ProfileName, Username: a.Username, TTL: ttl, PID: a.PID})
}

// ownLeaseOn finds the session's active lease on an item.
func (s *Server) ownLeaseOn(ctx context.Context, session string, it ItemRef) (string, *Outcome) {
	ls, err := s.reads.sessionLeases(ctx, session)
	if err != nil {
		o := refused(govern.CodeSourceUnavailable, "the control-plane DB could not be read: "+err.Error())
		return "", &o
	}
	for _, l := range ls {
		if l.Work.Org == it.Org && l.Work.Repo == it.Repo && l.Work.Number == it.Number && l.Work.Remote == it.Remote {
			return l.LeaseID, nil
		}
	}
	o := refused(
		govern.CodeNotFound,
		"your session holds no active lease on this issue; claim it first (gitea_lock_issue)",
	)
	return "", &o
}

func (s *Server) heartbeatLock(ctx context.Context, req *sdk.CallToolRequest, a HeartbeatLockArgs) Outcome {
	session, bad := s.enter(ctx, req, a.SessionID)
	if bad != nil {
		return *bad
	}
	if a.TaskSessionID == "" {
		return refused(
			govern.CodeInvalidRequest,
			"task_session_id is required: the one your claim returned (the lock's fencing token)",
		)
	}
	it, bad := s.resolveItem(&ItemRef{Org: a.Org, Repo: a.Repo, Number: a.IssueNumber, Remote: a.Remote})
	if bad != nil {
		return *bad
	}
	lease, bad := s.ownLeaseOn(ctx, session, it)
	if bad != nil {
		return *bad
	}
	params := govern.OwnLeaseParams{HeldFence: govern.HeldFence{TaskSession: a.TaskSessionID, ExpiresAt: a.ExpiresAt},
		OwnerProof: govern.OwnerProof{ClaimToken: a.ClaimToken}}
	if a.LockGeneration > 0 {
		params.LockGeneration = strconv.FormatInt(a.LockGeneration, 10)
	}
	return s.fencedParams(ctx, req, session, lease, params, actionid.Heartbeat)
}

func (s *Server) releaseLease(ctx context.Context, req *sdk.CallToolRequest, a ReleaseLeaseArgs) Outcome {
	session, bad := s.enter(ctx, req, a.SessionID)
	if bad != nil {
		return *bad
	}
	if a.LeaseID == "" {
		return refused(govern.CodeInvalidRequest, "lease_id is required")
	}
	params := govern.OwnLeaseParams{HeldFence: govern.HeldFence{ExpiresAt: a.ExpiresAt, TaskSession: a.TaskSessionID},
		OwnerProof: govern.OwnerProof{ClaimToken: a.ClaimToken}}
	if a.LockGeneration > 0 {
		params.LockGeneration = strconv.FormatInt(a.LockGeneration, 10)
	}
	return s.fencedParams(ctx, req, session, a.LeaseID, params, actionid.Release)
}

func (s *Server) inspectLease(ctx context.Context, req *sdk.CallToolRequest, a InspectLeaseArgs) MyLeases {
	session, bad := s.enter(ctx, req, a.SessionID)
	if bad != nil {
		return MyLeases{Code: bad.Code, Message: bad.Message, Next: bad.Next}
	}
	l, ok, err := s.reads.lease(ctx, a.LeaseID)
	switch {
	case err != nil:
		return MyLeases{
			Code:    govern.CodeSourceUnavailable,
			Message: "the control-plane DB could not be read: " + err.Error(),
			Next:    nextFor(govern.CodeSourceUnavailable),
		}
	case !ok:
		return MyLeases{
			Code:    govern.CodeNotFound,
			Message: "no lease " + strconv.Quote(a.LeaseID),
			Next:    nextFor(govern.CodeNotFound),
		}
	}
	return MyLeases{
		Success: true,
		Leases:  []LeaseView{s.leaseView(req, l, session, a.ClaimToken)},
		Next:    "Read only; heartbeat or release your own lease with its fence.",
	}
}
