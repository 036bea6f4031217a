package mcp

import "reflect"

// The tools' property descriptions, which clients and models read in each tool's input and
// output schemas, stand here rather than in struct tags: a tag cannot be wrapped, and many
// descriptions are longer than a line. schemaFor gives each property of a tool's schema the
// description its Go type and JSON name have in this table, wherever the type stands (an
// ItemRef inside an Outcome is described as one at the top of ItemArgs is). A property
// the table does not name has no description; TestEveryPropertyIsDescribed holds every
// input property to having one, and that every entry names a property.

// Descriptions several tools share.
const (
	descSessionID = "your worker session id"
	descRequestID = "optional idempotency key: a random id (16 to 200 characters; a UUID) naming this call. Send " +
		"the same call again with the same request_id when its reply was lost: you get the first answer, never a " +
		"second action. A secret like the claim token"
	descRemote  = "git remote name; default the workspace's configured remote (gitea.remote), else origin"
	descProfile = "your worker profile"
	descOrg     = "repository owner; default the configured Gitea repository's"
	descRepo    = "repository name; default the configured Gitea repository's"
)

// descriptions are the properties' descriptions by the Go type that holds each property,
// then by its JSON name.
var descriptions = map[reflect.Type]map[string]string{
	reflect.TypeFor[ItemRef](): {
		"org":    "repository owner; default: the configured Gitea repository's owner",
		"repo":   "repository name; default: the configured Gitea repository's name",
		"number": "issue number",
		"remote": descRemote,
	},
	reflect.TypeFor[Fence](): {
		"lease_id":         "the lease id",
		"expires_at":       "the lease's expires_at as last returned (it moves with every heartbeat)",
		"lease_generation": "the seed's lease_generation_id as last returned (0 where the DB records none)",
		"lock_file":        "the lock file's name (informational)",
		"lock_generation":  "the lock's lock_generation as last returned; 0 when your claim has no lock file",
		"task_session_id": "the lock's task_session_id (the seed's fencing token); required when lock_generation " +
			"is set",
		"heartbeat_count": "heartbeats so far (informational)",
		"claim_token": "the claim token your claim returned: a secret that proves the claim is yours. Pass it back " +
			"with the fence on every heartbeat, release and ask; never log or share it",
	},
	reflect.TypeFor[Outcome](): {
		"success": "true only when the action took effect",
		"result": "succeeded, refused, unknown (may have taken effect: read before acting), failed (nothing took " +
			"effect) or previewed",
		"code":             "stable refusal code (docs/mcp.md)",
		"message":          "what happened, in words",
		"next":             "what to do next",
		"attempt":          "steward's audit attempt id",
		"item":             "the item acted on",
		"fence":            "the fence to hold next (claim, heartbeat) or the one that ended (release, ask)",
		"effects":          "what changed",
		"heartbeat_every":  "heartbeat at least this often (Go duration)",
		"clarification_id": "ask: poll get_answer with this id",
		"skipped":          "claim next: the items passed over and why (the first 50 by number)",
		"skipped_total":    "claim next: how many items were passed over in all",
	},
	reflect.TypeFor[ClaimArgs](): {
		"session_id":            "your worker session id (required; bound to this connection on first use)",
		"item":                  "the issue to claim; omit it and set next to claim the next runnable item",
		"next":                  "claim the next runnable item by the allocation order",
		"exclude_issue_numbers": "with next: issue numbers not to consider",
		"role":                  "task role: author (default), reviewer, merger or conflict-fix",
		"profile":               descProfile,
		"username":              "your Gitea username (the lock's claimant)",
		"pid": "your process id, recorded for liveness; over stdio default the process that " +
			"started steward mcp",
		"branch":     "branch name; default feat/issue-N",
		"worktree":   "worktree path; default <repo-root>/branches/<branch>",
		"ttl":        "lease TTL as a Go duration (10m); default the lease policy's",
		"request_id": descRequestID,
	},
	reflect.TypeFor[FencedArgs](): {
		"session_id": descSessionID,
		"fence":      "the fence your claim or last heartbeat returned (lease_id and expires_at required)",
		"request_id": descRequestID,
	},
	reflect.TypeFor[AskArgs](): {
		"session_id": descSessionID,
		"fence":      "the fence of the claim you ask about; asking releases it",
		"question":   "the question for a maintainer (Markdown, at most 64 KiB)",
		"request_id": descRequestID,
	},
	reflect.TypeFor[GetAnswerArgs](): {
		"session_id":       descSessionID,
		"clarification_id": "the id ask returned",
	},
	reflect.TypeFor[Answer](): {
		"success":  "false when the clarification could not be read",
		"status":   "pending (no answer yet), answered, or unmarked (the marker was removed without an answer)",
		"question": "your question as posted",
		"answer":   "the maintainer's answer (Markdown), once answered",
		"marked":   "the item still carries the clarification marker label",
	},
	reflect.TypeFor[SessionArgs](): {
		"session_id": descSessionID,
		"limit":      "at most this many leases in this page (1 to 50; default 20)",
		"cursor":     "the next_cursor a previous page returned, to read the next page",
		"claim_token": "optional: a claim token your claim returned; the lease it proves comes with its fence " +
			"(needed after reconnecting: a session id alone shows no fence)",
	},
	reflect.TypeFor[LeaseView](): {
		"expires_in": "time left (negative: past expiry)",
		"fence":      "your own lease's current fence, when this connection can prove the claim is its own",
		"yours":      "held by the session you named",
	},
	reflect.TypeFor[MyLeases](): {
		"total":       "my_leases: how many active leases the session holds in all",
		"next_cursor": "my_leases: pass it as cursor to read the next page; absent on the last page",
	},
	reflect.TypeFor[ItemArgs](): {
		"session_id": descSessionID,
		"item":       "the issue",
	},
	reflect.TypeFor[ItemStatus](): {
		"why":          "why the item is not claimable",
		"why_code":     "the code a claim of the item is refused with now (claim follows this rule exactly)",
		"leases":       "active leases on the item (the first 20)",
		"leases_total": "how many active leases hold the item in all",
		"state":        "open or closed, from Gitea",
		"gitea":        "ok, unavailable (with the reason in message) or not_configured",
	},
	reflect.TypeFor[InspectArgs](): {
		"session_id":    descSessionID,
		"issue_number":  "the issue number",
		"branch_name":   "the branch you expect the lock to name (checked when given)",
		"worktree_path": "the worktree you expect the lock to name (checked when given)",
		"remote":        descRemote,
		"org":           descOrg,
		"repo":          descRepo,
	},
	reflect.TypeFor[Contract](): {
		"binding_mismatches": "the branch or worktree you named differs from the lock's",
	},
	reflect.TypeFor[LockIssueArgs](): {
		"session_id":    descSessionID,
		"issue_number":  "the issue to lock",
		"branch_name":   "the branch; default feat/issue-N",
		"worktree_path": "the worktree; default <repo-root>/branches/<branch>",
		"remote":        descRemote,
		"org":           descOrg,
		"repo":          descRepo,
		"username":      "your Gitea username (the lock's claimant)",
		"profile_name":  descProfile,
		"pid":           "your process id (see claim)",
		"request_id":    descRequestID,
	},
	reflect.TypeFor[AllocateArgs](): {
		"session_id":            descSessionID,
		"role":                  "task role: author (default), reviewer, merger or conflict-fix",
		"remote":                descRemote,
		"org":                   "must be the configured repository's owner when given",
		"repo":                  "must be the configured repository's name when given",
		"profile_name":          descProfile,
		"username":              "your Gitea username",
		"apply":                 "false (default): a dry run that writes nothing; true: claim the selected item",
		"side_effect_free":      "assert that the call writes nothing; refused with apply",
		"exclude_issue_numbers": "issue numbers not to consider",
		"lease_ttl_seconds":     "lease TTL in seconds; default the lease policy's",
		"pid":                   "your process id (see claim)",
		"request_id":            descRequestID,
	},
	reflect.TypeFor[HeartbeatLockArgs](): {
		"session_id":      descSessionID,
		"issue_number":    "the issue whose lock you hold",
		"task_session_id": "the task_session_id your claim returned",
		"remote":          descRemote,
		"org":             descOrg,
		"repo":            descRepo,
		"lock_generation": "also fence on the lock generation you hold",
		"expires_at":      "also fence on the lease expiry you hold",
		"claim_token":     "the claim token your claim returned (required over HTTP; see docs/mcp.md)",
		"request_id":      descRequestID,
	},
	reflect.TypeFor[ReleaseLeaseArgs](): {
		"session_id":      descSessionID,
		"lease_id":        "the lease to release",
		"expires_at":      "also fence on the lease expiry you hold",
		"lock_generation": "also fence on the lock generation you hold",
		"task_session_id": "also fence on the lock's task_session_id",
		"claim_token":     "the claim token your claim returned (required over HTTP; see docs/mcp.md)",
		"request_id":      descRequestID,
	},
	reflect.TypeFor[InspectLeaseArgs](): {
		"session_id":  descSessionID,
		"lease_id":    "the lease to read",
		"claim_token": "optional: the lease's claim token, to be shown its fence",
	},
}
