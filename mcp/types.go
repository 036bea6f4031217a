package mcp

import "steward/alloc"

// ItemRef names one issue. Org and Repo default to the configured Gitea repository's, Remote
// to the workspace's configured remote (gitea.remote), origin when none is configured.
type ItemRef struct {
	Org    string `json:"org,omitempty"    jsonschema:"repository owner; default: the configured Gitea repository's owner"`
	Repo   string `json:"repo,omitempty"   jsonschema:"repository name; default: the configured Gitea repository's name"`
	Number int64  `json:"number,omitempty" jsonschema:"issue number"                                                                           mcp:"required"`
	Remote string `json:"remote,omitempty" jsonschema:"git remote name; default the workspace's configured remote (gitea.remote), else origin"`
}

// Fence is what a worker holds on its claim: the values a heartbeat, release or ask must
// name, and each mutation returns anew. A value that moved is refused fence_moved.
type Fence struct {
	LeaseID         string `json:"lease_id,omitempty"         mcp:"required" jsonschema:"the lease id"`
	ExpiresAt       string `json:"expires_at,omitempty"       mcp:"required" jsonschema:"the lease's expires_at as last returned (it moves with every heartbeat)"`
	LeaseGeneration int64  `json:"lease_generation,omitempty"                jsonschema:"the seed's lease_generation_id as last returned (0 where the DB records none)"`
	LockFile        string `json:"lock_file,omitempty"                       jsonschema:"the lock file's name (informational)"`
	LockGeneration  int64  `json:"lock_generation,omitempty"                 jsonschema:"the lock's lock_generation as last returned; 0 when your claim has no lock file"`
	TaskSessionID   string `json:"task_session_id,omitempty"                 jsonschema:"the lock's task_session_id (the seed's fencing token); required when lock_generation is set"`
	HeartbeatCount  int64  `json:"heartbeat_count,omitempty"                 jsonschema:"heartbeats so far (informational)"`
	// ClaimToken is the secret that proves the claim is this worker's: returned by the
	// claim to its worker alone, required by every heartbeat, release and ask.
	ClaimToken string `json:"claim_token,omitempty"                     jsonschema:"the claim token your claim returned: a secret that proves the claim is yours. Pass it back with the fence on every heartbeat, release and ask; never log or share it"`
}

// Outcome is the result of every mutating tool. Refusals and unknown outcomes are outcomes
// too: success false, a stable code, a message, and what to do next.
type Outcome struct {
	Success bool   `json:"success"                    jsonschema:"true only when the action took effect"`
	Result  string `json:"result"                     jsonschema:"succeeded, refused, unknown (may have taken effect: read before acting), failed (nothing took effect) or previewed"`
	Code    string `json:"code,omitempty"             jsonschema:"stable refusal code (docs/mcp.md)"`
	Message string `json:"message,omitempty"          jsonschema:"what happened, in words"`
	Next    string `json:"next"                       jsonschema:"what to do next"`
	// Attempt is steward's audit attempt id (absent when nothing reached the core).
	Attempt string   `json:"attempt,omitempty"          jsonschema:"steward's audit attempt id"`
	Item    *ItemRef `json:"item,omitempty"             jsonschema:"the item acted on"`
	Fence   *Fence   `json:"fence,omitempty"            jsonschema:"the fence to hold next (claim, heartbeat) or the one that ended (release, ask)"`
	Effects []string `json:"effects,omitempty"          jsonschema:"what changed"`
	// HeartbeatEvery is the lease policy's cadence for the claim's task class.
	HeartbeatEvery  string       `json:"heartbeat_every,omitempty"  jsonschema:"heartbeat at least this often (Go duration)"`
	ClarificationID string       `json:"clarification_id,omitempty" jsonschema:"ask: poll get_answer with this id"`
	Skipped         []alloc.Skip `json:"skipped,omitempty"          jsonschema:"claim next: the items passed over and why (the first 50 by number)"`
	SkippedTotal    int          `json:"skipped_total,omitempty"    jsonschema:"claim next: how many items were passed over in all"`
}

// ClaimArgs are claim's arguments.
type ClaimArgs struct {
	SessionID string   `json:"session_id,omitempty"            mcp:"required" jsonschema:"your worker session id (required; bound to this connection on first use)"`
	Item      *ItemRef `json:"item,omitempty"                                 jsonschema:"the issue to claim; omit it and set next to claim the next runnable item"`
	Next      bool     `json:"next,omitempty"                                 jsonschema:"claim the next runnable item by the allocation order"`
	Exclude   []int64  `json:"exclude_issue_numbers,omitempty"                jsonschema:"with next: issue numbers not to consider"`
	Role      string   `json:"role,omitempty"                                 jsonschema:"task role: author (default), reviewer, merger or conflict-fix"`
	Profile   string   `json:"profile,omitempty"                              jsonschema:"your worker profile"`
	Username  string   `json:"username,omitempty"                             jsonschema:"your Gitea username (the lock's claimant)"`
	PID       int64    `json:"pid,omitempty"                                  jsonschema:"your process id, recorded for liveness; over stdio default the process that started steward mcp"`
	Branch    string   `json:"branch,omitempty"                               jsonschema:"branch name; default feat/issue-N"`
	Worktree  string   `json:"worktree,omitempty"                             jsonschema:"worktree path; default <repo-root>/branches/<branch>"`
	TTL       string   `json:"ttl,omitempty"                                  jsonschema:"lease TTL as a Go duration (10m); default the lease policy's"`
	RequestID string   `json:"request_id,omitempty"                           jsonschema:"optional idempotency key: a random id (16 to 200 characters; a UUID) naming this call. Send the same call again with the same request_id when its reply was lost: you get the first answer, never a second action. A secret like the claim token"`
}

// FencedArgs are the arguments of heartbeat and release.
type FencedArgs struct {
	SessionID string `json:"session_id,omitempty" mcp:"required" jsonschema:"your worker session id"`
	Fence     *Fence `json:"fence,omitempty"      mcp:"required" jsonschema:"the fence your claim or last heartbeat returned (lease_id and expires_at required)"`
	RequestID string `json:"request_id,omitempty"                jsonschema:"optional idempotency key: a random id (16 to 200 characters; a UUID) naming this call. Send the same call again with the same request_id when its reply was lost: you get the first answer, never a second action. A secret like the claim token"`
}

// AskArgs are ask's arguments.
type AskArgs struct {
	SessionID string `json:"session_id,omitempty" mcp:"required" jsonschema:"your worker session id"`
	Fence     *Fence `json:"fence,omitempty"      mcp:"required" jsonschema:"the fence of the claim you ask about; asking releases it"`
	Question  string `json:"question,omitempty"   mcp:"required" jsonschema:"the question for a maintainer (Markdown, at most 64 KiB)"`
	RequestID string `json:"request_id,omitempty"                jsonschema:"optional idempotency key: a random id (16 to 200 characters; a UUID) naming this call. Send the same call again with the same request_id when its reply was lost: you get the first answer, never a second action. A secret like the claim token"`
}

// GetAnswerArgs are get_answer's arguments.
type GetAnswerArgs struct {
	SessionID       string `json:"session_id,omitempty"       mcp:"required" jsonschema:"your worker session id"`
	ClarificationID string `json:"clarification_id,omitempty" mcp:"required" jsonschema:"the id ask returned"`
}

// Answer is get_answer's result.
type Answer struct {
	Success         bool     `json:"success"                    jsonschema:"false when the clarification could not be read"`
	Status          string   `json:"status"                     jsonschema:"pending (no answer yet), answered, or unmarked (the marker was removed without an answer)"`
	Code            string   `json:"code,omitempty"`
	Message         string   `json:"message,omitempty"`
	Next            string   `json:"next"`
	ClarificationID string   `json:"clarification_id,omitempty"`
	Item            *ItemRef `json:"item,omitempty"`
	Question        string   `json:"question,omitempty"         jsonschema:"your question as posted"`
	Answer          string   `json:"answer,omitempty"           jsonschema:"the maintainer's answer (Markdown), once answered"`
	AnsweredBy      string   `json:"answered_by,omitempty"`
	AnsweredAt      string   `json:"answered_at,omitempty"`
	Marked          bool     `json:"marked"                     jsonschema:"the item still carries the clarification marker label"`
}

// SessionArgs name the worker session (my_leases), and may prove a claim of it.
type SessionArgs struct {
	SessionID string `json:"session_id,omitempty"  mcp:"required" jsonschema:"your worker session id"`
	// Limit and Cursor page the list.
	Limit  int    `json:"limit,omitempty"                      jsonschema:"at most this many leases in this page (1 to 50; default 20)"`
	Cursor string `json:"cursor,omitempty"                     jsonschema:"the next_cursor a previous page returned, to read the next page"`
	// ClaimToken proves one claim: its lease comes with its full fence.
	ClaimToken string `json:"claim_token,omitempty"                jsonschema:"optional: a claim token your claim returned; the lease it proves comes with its fence (needed after reconnecting: a session id alone shows no fence)"`
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
	ExpiresIn      string   `json:"expires_in,omitempty" jsonschema:"time left (negative: past expiry)"`
	HeartbeatCount int64    `json:"heartbeat_count"`
	Fence          *Fence   `json:"fence,omitempty"      jsonschema:"your own lease's current fence, when this connection can prove the claim is its own"`
	Yours          bool     `json:"yours"                jsonschema:"held by the session you named"`
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
	Total      int    `json:"total,omitempty"       jsonschema:"my_leases: how many active leases the session holds in all"`
	NextCursor string `json:"next_cursor,omitempty" jsonschema:"my_leases: pass it as cursor to read the next page; absent on the last page"`
}

// ItemArgs name an item (item_status).
type ItemArgs struct {
	SessionID string   `json:"session_id,omitempty" mcp:"required" jsonschema:"your worker session id"`
	Item      *ItemRef `json:"item,omitempty"       mcp:"required" jsonschema:"the issue"`
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
	Why       string `json:"why,omitempty"          jsonschema:"why the item is not claimable"`
	// WhyCode is the code claim refuses this item with, for the same reason.
	WhyCode     string      `json:"why_code,omitempty"     jsonschema:"the code a claim of the item is refused with now (claim follows this rule exactly)"`
	Leases      []LeaseView `json:"leases,omitempty"       jsonschema:"active leases on the item (the first 20)"`
	LeasesTotal int         `json:"leases_total,omitempty" jsonschema:"how many active leases hold the item in all"`
	Lock        *LockView   `json:"lock,omitempty"`
	Title       string      `json:"title,omitempty"`
	State       string      `json:"state,omitempty"        jsonschema:"open or closed, from Gitea"`
	Labels      []string    `json:"labels,omitempty"`
	Gitea       string      `json:"gitea"                  jsonschema:"ok, unavailable (with the reason in message) or not_configured"`
}

// InspectArgs are inspect_lock_contract's arguments (the seed's names).
type InspectArgs struct {
	SessionID    string `json:"session_id,omitempty"    mcp:"required" jsonschema:"your worker session id"`
	IssueNumber  int64  `json:"issue_number,omitempty"  mcp:"required" jsonschema:"the issue number"`
	BranchName   string `json:"branch_name,omitempty"                  jsonschema:"the branch you expect the lock to name (checked when given)"`
	WorktreePath string `json:"worktree_path,omitempty"                jsonschema:"the worktree you expect the lock to name (checked when given)"`
	Remote       string `json:"remote,omitempty"                       jsonschema:"git remote name; default the workspace's configured remote (gitea.remote), else origin"`
	Org          string `json:"org,omitempty"                          jsonschema:"repository owner; default the configured Gitea repository's"`
	Repo         string `json:"repo,omitempty"                         jsonschema:"repository name; default the configured Gitea repository's"`
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
	BindingMismatches []string `json:"binding_mismatches,omitempty" jsonschema:"the branch or worktree you named differs from the lock's"`
	RecommendedAction string   `json:"recommended_action"`
}
