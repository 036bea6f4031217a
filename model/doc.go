// Package model owns steward's picture of the supervised system, as pure code:
// it joins lock files, control-plane leases and sessions, and Gitea facts into
// one Snapshot of claims, contention, clarifications, orphans, sessions,
// traffic buckets and activity, and classifies every reconcilable artifact
// with the exact kind strings of docs/formats.md. Reading the sources, and
// keeping the snapshot current while they change, is model/live's.
//
// What it owns:
//
//   - the Snapshot types and their stable JSON (`steward status --json`);
//   - the Input types (the sources as read, with the observations that needed
//     IO already made: LockObs, LeaseObs, SessionObs, GiteaFact);
//   - Build and the per-item derivation: every derived fact keeps its
//     Evidence (source, field, value, age);
//   - Incidents: the snapshot's orphans grouped by root cause (a dead worker's lease and
//     lock files are one incident), the one grouping every surface shows;
//   - Stream, the same derivation a page of items at a time for a one-shot read of a large
//     fleet (`steward status --json`): the lease rows kept encoded (LeaseStore), each page
//     derived by an engine of its own, its claims and items kept encoded and compressed
//     until StreamJSON writes the document;
//   - Engine, the same derivation kept current: a change re-derives only the
//     items it touches, and a heap of deadlines says when passing time
//     changes an item's verdict (the live model feeds it and publishes its
//     snapshots).
//
// Pure by structure: no IO and no clock — now is a parameter of everything that
// derives. Its imports are the standard library's packages without IO and the
// pure leaves that hold the sources' records (locks/lockrec, leases/leaserec,
// gitea/gitearec), never a source package itself, so go list -deps names no
// database driver, Gitea SDK or file watcher (arch_test.go, TestPureByStructure).
//
// Honesty: a source that is unavailable or partial never makes anything read
// as free, unowned or orphaned by its absence, and partiality is scoped to what
// it touches (an undecodable lease row makes its own item unproven, nothing
// else); process liveness is evidence only on the local host (elsewhere it is
// unknown, never dead).
//
// What it must never do: read or write any source, look at a process or a
// file, read the clock, import a source package (locks, leases, gitea),
// govern, tui or cli, or decide whether an action is allowed — an orphan
// names its reconciling action by id and target (ActionRef), and the governed
// core fills Allowed and Refusal (a hook in the layer above).
package model
