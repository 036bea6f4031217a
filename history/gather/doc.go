// Package gather reads the evidence history questions are asked of, read-only, from the
// sources as they are: the control-plane DB through leases.Reader (every lease row and
// every event, paged), the lock directory with its retired/ archives (locks.LoadDir), the
// audit log (govern.ReadAudit), and one item's Gitea thread when a client is given. It also
// keeps the "last seen" mark of "since you left" in steward's own state directory.
//
// It must never write to a supervised source: it opens the DB read-only (mode=ro), only
// reads the lock directory and the audit log, and refuses to keep a mark inside a source's
// directory. A source it cannot read becomes a gap in the evidence, never an empty one.
package gather
