package actionid

import "slices"

// The action ids, as requests, audit records and `steward actions` name them. They are
// strings, not a named type: an id travels in JSON (audit records, MCP results, --json
// output) and an unknown one must reach the core to be refused unknown_action there.
const (
	// Supervisor recoveries of a lease.
	ReclaimExpired = "lease.reclaim-expired"
	AbandonStale   = "lease.abandon-stale"
	ExpireSweep    = "lease.expire-sweep"
	// Supervisor recoveries of a lock file, and the undo of a recorded inverse.
	RetireLock  = "lock.retire"
	RestoreLock = "lock.restore"
	Undo        = "undo"
	// A worker's actions on its own claim.
	Claim     = "worker.claim"
	Heartbeat = "worker.heartbeat"
	Release   = "worker.release"
	// Clarifications on a Gitea item.
	Answer  = "clarification.answer"
	Ask     = "clarification.ask"
	Relabel = "clarification.relabel"
	// The attention inbox.
	AttentionAck    = "attention.ack"
	AttentionSnooze = "attention.snooze"
	// The whole-item recovery plan.
	Recover = "item.recover"
)

// all is every id in the order the core registers its actions.
var all = [...]string{
	ReclaimExpired, AbandonStale, ExpireSweep,
	RetireLock, RestoreLock, Undo,
	Claim, Heartbeat, Release,
	Answer, Ask, Relabel,
	AttentionAck, AttentionSnooze,
	Recover,
}

// All returns every action id, in the order the core registers its actions.
func All() []string { return slices.Clone(all[:]) }
