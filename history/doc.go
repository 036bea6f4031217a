// Package history answers "what happened, and what was the fleet like then?" from the
// supervised system's own evidence: the control-plane events and lease rows (leases), the
// live lock files and their archived generations under retired/ (locks), steward's own
// audit log, and an item's Gitea comments and label changes (gitea).
//
// It owns the merge of those sources into one timeline ordered by time, each entry naming
// where it came from (Entry.Source, Entry.Ref); the gaps where a source is unreadable, does
// not reach back that far, or cannot answer the question (a seed DB's events record no
// session); the reconstruction of the fleet at a past instant (At) — which claims were
// live, who held what, what was past its expiry, who was refused — with what cannot be
// known said as unknown; "since you left" (Since); and the contention of sessions over
// items in a window (Heat).
//
// history is pure: it does no IO and reads no clock — the evidence and every instant are
// parameters. A missing or unreadable source is a Gap, never an empty list: nothing here
// reads "no entries" as "nothing happened". Reading the sources is history/gather's job,
// and it never writes to any of them.
package history
