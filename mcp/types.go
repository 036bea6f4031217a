package mcp

import "steward/alloc"

// ItemRef names one issue. Org and Repo default to the configured Gitea repository's, Remote
// to the workspace's configured remote (gitea.remote), origin when none is configured.
type ItemRef struct {
	Org    string `json:"org,omitempty"`
	Repo   string `json:"repo,omitempty"`
	Number int64  `json:"number,omitempty" mcp:"required"`
	Remote string `json:"remote,omitempty"`
}

// Fence is what a worker holds on its claim: the values a heartbeat, release or ask must
// name, and each mutation returns anew. A value that moved is refused fence_moved.
type Fence struct {
	LeaseID         string `json:"lease_id,omitempty" mcp:"required"`
	ExpiresAt       string `json:"expires_at,omitempty" mcp:"required"`
	LeaseGeneration int64  `json:"lease_generation,omitempty"`
	LockFile        string `json:"lock_file,omitempty"`
	LockGeneration  int64  `json:"lock_generation,omitempty"`
	TaskSessionID   string `json:"task_session_id,omitempty"`
	HeartbeatCount  int64  `json:"heartbeat_count,omitempty"`
	// ClaimToken is the secret that proves the claim is this worker's: returned by the
	// claim to its worker alone, required by every heartbeat, release and ask.
	ClaimToken string `json:"claim_token,omitempty"`
}

// Outcome is the result of every mutating tool. Refusals and unknown outcomes are outcomes
// too: success false, a stable code, a message, and what to do next.
type Outcome struct {
	Success bool   `json:"success"`
	Result  string `json:"result"`
	Code    string `json:"code,omitempty"`
	Message string `json:"message,omitempty"`
	Next    string `json:"next"`
	// Attempt is steward's audit attempt id (absent when nothing reached the core).
	Attempt string   `json:"attempt,omitempty"`
	Item    *ItemRef `json:"item,omitempty"`
	Fence   *Fence   `json:"fence,omitempty"`
	Effects []string `json:"effects,omitempty"`
	// HeartbeatEvery is the lease policy's cadence for the claim's task class.
	HeartbeatEvery  string       `json:"heartbeat_every,omitempty"`
	ClarificationID string       `json:"clarification_id,omitempty"`
	Skipped         []alloc.Skip `json:"skipped,omitempty"`
	SkippedTotal    int          `json:"skipped_total,omitempty"`
}

// ClaimArgs are claim's arguments.
type ClaimArgs struct {
	SessionID string   `json:"session_id,omitempty" mcp:"required"`
	Item      *ItemRef `json:"item,omitempty"`
	Next      bool     `json:"next,omitempty"`
	Exclude   []int64  `json:"exclude_issue_numbers,omitempty"`
	Role      string   `json:"role,omitempty"`
	Profile   string   `json:"profile,omitempty"`
	Username  string   `json:"username,omitempty"`
	PID       int64    `json:"pid,omitempty"`
	Branch    string   `json:"branch,omitempty"`
	Worktree  string   `json:"worktree,omitempty"`
	TTL       string   `json:"ttl,omitempty"`
	RequestID string   `json:"request_id,omitempty"`
}

// FencedArgs are the arguments of heartbeat and release.
type FencedArgs struct {
	SessionID string `json:"session_id,omitempty" mcp:"required"`
	Fence     *Fence `json:"fence,omitempty" mcp:"required"`
	RequestID string `json:"request_id,omitempty"`
}

// AskArgs are ask's arguments.
type AskArgs struct {
	SessionID string `json:"session_id,omitempty" mcp:"required"`
	Fence     *Fence `json:"fence,omitempty" mcp:"required"`
	Question  string `json:"question,omitempty" mcp:"required"`
	RequestID string `json:"request_id,omitempty"`
}

// GetAnswerArgs are get_answer's arguments.
type GetAnswerArgs struct {
	SessionID       string `json:"session_id,omitempty" mcp:"required"`
	ClarificationID string `json:"clarification_id,omitempty" mcp:"required"`
}

// Answer is get_answer's result.
type Answer struct {
	Success         bool     `json:"success"`
	Status          string   `json:"status"`
	Code            string   `json:"code,omitempty"`
	Message         string   `json:"message,omitempty"`
	Next            string   `json:"next"`
	ClarificationID string   `json:"clarification_id,omitempty"`
	Item            *ItemRef `json:"item,omitempty"`
	Question        string   `json:"question,omitempty"`
	Answer          string   `json:"answer,omitempty"`
	AnsweredBy      string   `json:"answered_by,omitempty"`
	AnsweredAt      string   `json:"answered_at,omitempty"`
	Marked          bool     `json:"marked"`
}

// SessionArgs name the worker session (my_leases), and may prove a claim of it.
type SessionArgs struct {
	SessionID string `json:"session_id,omitempty" mcp:"required"`
	// Limit and Cursor page the list.
	Limit  int    `json:"limit,omitempty"`
	Cursor string `json:"cursor,omitempty"`
	// ClaimToken proves one claim: its lease comes with its full fence.
	ClaimToken string `json:"claim_token,omitempty"`
}

// LeaseView is one lease as a worker sees it.
type LeaseView struct {
	LeaseID        string   `json:"lease_id"`
	Item           *ItemRef `json:"item,omitempty"`
	Status         string   `json:"status"`
	SessionID      string   `json:"session_id"`
	Role           string   `json:"role,omitempty"`
	Phase          string   `json:"phase,omitempty"`
	ExpiresAt      string   `json:"expires_at,omitempty"`
	ExpiresIn      string   `json:"expires_in,omitempty"`
	HeartbeatCount int64    `json:"heartbeat_count"`
	Fence          *Fence   `json:"fence,omitempty"`
	Yours          bool     `json:"yours"`
	// Note says why a lease of the named session comes without its fence.
	Note     string   `json:"note,omitempty"`
	Problems []string `json:"problems,omitempty"`
}

// MyLeases is my_leases's result.
type MyLeases struct {
	Success bool        `json:"success"`
	Code    string      `json:"code,omitempty"`
	Message string      `json:"message,omitempty"`
	Next    string      `json:"next"`
	Leases  []LeaseView `json:"leases,omitempty"`
	// Total counts the session's active leases; NextCursor reads the next page.
	Total      int    `json:"total,omitempty"`
	NextCursor string `json:"next_cursor,omitempty"`
}

// ItemArgs name an item (item_status).
type ItemArgs struct {
	SessionID string   `json:"session_id,omitempty" mcp:"required"`
	Item      *ItemRef `json:"item,omitempty" mcp:"required"`
}

// LockView is a lock file as item_status shows it.
type LockView struct {
	File           string `json:"file"`
	Readable       bool   `json:"readable"`
	Problem        string `json:"problem,omitempty"`
	Contract       string `json:"contract,omitempty"`
	OwnerSession   string `json:"owner_session,omitempty"`
	LeaseID        string `json:"lease_id,omitempty"`
	LockGeneration int64  `json:"lock_generation,omitempty"`
	ExpiresAt      string `json:"expires_at,omitempty"`
}

// ItemStatus is item_status's result.
type ItemStatus struct {
	Success bool     `json:"success"`
	Code    string   `json:"code,omitempty"`
	Message string   `json:"message,omitempty"`
	Next    string   `json:"next"`
	Item    *ItemRef `json:"item,omitempty"`
	// Claimable is true when no active lease and no lock hold the item and, when Gitea is
	// known, the allocation rules let a worker take it.
	Claimable bool   `json:"claimable"`
	Why       string `json:"why,omitempty"`
	// WhyCode is the code claim refuses this item with, for the same reason.
	WhyCode     string      `json:"why_code,omitempty"`
	Leases      []LeaseView `json:"leases,omitempty"`
	LeasesTotal int         `json:"leases_total,omitempty"`
	Lock        *LockView   `json:"lock,omitempty"`
	Title       string      `json:"title,omitempty"`
	State       string      `json:"state,omitempty"`
	Labels      []string    `json:"labels,omitempty"`
	Gitea       string      `json:"gitea"`
}

// InspectArgs are inspect_lock_contract's arguments (the seed's names).
type InspectArgs struct {
	SessionID    string `json:"session_id,omitempty" mcp:"required"`
	IssueNumber  int64  `json:"issue_number,omitempty" mcp:"required"`
	BranchName   string `json:"branch_name,omitempty"`
	WorktreePath string `json:"worktree_path,omitempty"`
	Remote       string `json:"remote,omitempty"`
	Org          string `json:"org,omitempty"`
	Repo         string `json:"repo,omitempty"`
}

// Contract is inspect_lock_contract's result: the seed's assess_lock_contract keys plus its
// recommended action (seed-digest-1 §2.7).
type Contract struct {
	Success           bool     `json:"success"`
	Code              string   `json:"code,omitempty"`
	Message           string   `json:"message,omitempty"`
	Next              string   `json:"next"`
	LockFile          string   `json:"lock_file,omitempty"`
	Contract          string   `json:"contract,omitempty"`
	Canonical         bool     `json:"canonical"`
	MissingFields     []string `json:"missing_fields,omitempty"`
	ClaimantUsername  string   `json:"claimant_username,omitempty"`
	ClaimantProfile   string   `json:"claimant_profile,omitempty"`
	ClaimantPlacement string   `json:"claimant_placement,omitempty"`
	ExpirationState   string   `json:"expiration_state,omitempty"`
	ExpiresAt         string   `json:"expires_at,omitempty"`
	Expired           *bool    `json:"expired,omitempty"`
	Heartbeatable     bool     `json:"heartbeatable"`
	CreatePREligible  bool     `json:"create_pr_eligible"`
	LockGeneration    *int64   `json:"lock_generation,omitempty"`
	TaskSessionID     string   `json:"task_session_id,omitempty"`
	OwnerSession      string   `json:"owner_session,omitempty"`
	LeaseID           string   `json:"lease_id,omitempty"`
	Reasons           []string `json:"reasons,omitempty"`
	BindingMismatches []string `json:"binding_mismatches,omitempty"`
	RecommendedAction string   `json:"recommended_action"`
}
