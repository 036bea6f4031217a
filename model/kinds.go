package model

// OrphanKind names a reconcilable artifact (docs/formats.md, `steward status --json`).
type OrphanKind string

// The orphan kinds, exactly as PRODUCT.md §3 spells them.
const (
	OrphanActiveLeasePastExpiry     OrphanKind = "active-lease-past-expiry"
	OrphanLease                     OrphanKind = "orphan-lease"
	OrphanStaleLeaseDeadOwner       OrphanKind = "stale-lease-dead-owner"
	OrphanStaleLeaseMissingWorktree OrphanKind = "stale-lease-missing-worktree"
	OrphanLockWithoutWorktree       OrphanKind = "lock-without-worktree"
	OrphanLiveLockDeadOwner         OrphanKind = "live-lock-dead-owner"
	OrphanStaleLockDeadOwner        OrphanKind = "stale-lock-dead-owner"
	OrphanExpiredLockLiveOwner      OrphanKind = "expired-lock-live-owner"
	OrphanLockNeverExpires          OrphanKind = "lock-never-expires"
	OrphanIncompleteLock            OrphanKind = "incomplete-lock"
	OrphanLegacyLock                OrphanKind = "legacy-lock"
	OrphanUnreadableLock            OrphanKind = "unreadable-lock"
	OrphanPendingHandoffUnconsumed  OrphanKind = "pending-handoff-unconsumed"
	OrphanMergedPRLiveClaim         OrphanKind = "merged-pr-live-claim"
	OrphanClosedIssueLiveClaim      OrphanKind = "closed-issue-live-claim"
	OrphanStalePRNoClaim            OrphanKind = "stale-pr-no-claim"
	// OrphanLockLeaseExpiryMismatch: a lock and the active lease it belongs to disagree on
	// when the claim expires (a heartbeat renewed one and not the other). Our own kind, not
	// PRODUCT.md §3's: the repair is the worker's next heartbeat.
	OrphanLockLeaseExpiryMismatch OrphanKind = "lock-lease-expiry-mismatch"
)

// OrphanKinds lists every orphan kind in table order.
var OrphanKinds = []OrphanKind{
	OrphanActiveLeasePastExpiry, OrphanLease, OrphanStaleLeaseDeadOwner, OrphanStaleLeaseMissingWorktree,
	OrphanLockWithoutWorktree, OrphanLiveLockDeadOwner, OrphanStaleLockDeadOwner, OrphanExpiredLockLiveOwner,
	OrphanLockNeverExpires, OrphanIncompleteLock, OrphanLegacyLock, OrphanUnreadableLock,
	OrphanPendingHandoffUnconsumed, OrphanMergedPRLiveClaim, OrphanClosedIssueLiveClaim, OrphanStalePRNoClaim,
	OrphanLockLeaseExpiryMismatch,
}

// ContentionKind names a contention entry.
type ContentionKind string

// The contention kinds. claim-refused is routine information; the other three
// are real collisions (two owners of one item).
const (
	ContentionClaimRefused          ContentionKind = "claim-refused"
	ContentionDuplicateLiveLock     ContentionKind = "duplicate-live-lock"
	ContentionConcurrentActiveLease ContentionKind = "concurrent-active-lease"
	ContentionLockLeaseMismatch     ContentionKind = "lock-lease-mismatch"
)

// ContentionKinds lists every contention kind.
var ContentionKinds = []ContentionKind{ContentionClaimRefused, ContentionDuplicateLiveLock,
	ContentionConcurrentActiveLease, ContentionLockLeaseMismatch}

// Bucket is an item's traffic-control bucket (seed §8.2), or BucketUnknown.
type Bucket string

// The seed's five buckets, plus steward's unknown: a source needed to place the
// item could not be read, so it is not claimed to be runnable.
const (
	BucketRunnable         Bucket = "runnable"
	BucketLeased           Bucket = "leased"
	BucketBlocked          Bucket = "blocked"
	BucketNeedsController  Bucket = "needs_controller"
	BucketTerminalComplete Bucket = "terminal_complete"
	BucketUnknown          Bucket = "unknown"
)

// Source names where a fact came from.
type Source string

// The three sources.
const (
	SourceLocks Source = "locks"
	SourceDB    Source = "db"
	SourceGitea Source = "gitea"
)

// Status is a source's health.
type Status string

// Health statuses of a source.
const (
	StatusOK            Status = "ok"
	StatusDegraded      Status = "degraded"
	StatusUnavailable   Status = "unavailable"
	StatusNotConfigured Status = "not_configured"
	// StatusNotObserved: the source is on another host and is not read from this one
	// (a workspace's lock directory, see LocksHere). Nothing is concluded from it; it is
	// neither empty nor broken.
	StatusNotObserved Status = "not_observed"
)

// Liveness is what is known about an owner process: alive, dead or unknown.
// Dead is only ever concluded on the host that wrote the record.
type Liveness string

// Liveness values (the same strings as leaserec.ProcessState).
const (
	LivenessAlive   Liveness = "alive"
	LivenessDead    Liveness = "dead"
	LivenessUnknown Liveness = "unknown"
)

// Worktree is what is known about a worktree directory.
type Worktree string

// Worktree states (the same strings as leaserec.WorktreeState).
const (
	WorktreePresent Worktree = "present"
	WorktreeMissing Worktree = "missing"
	WorktreeUnknown Worktree = "unknown"
)
