// Package model owns steward's live picture of the supervised system: it joins
// lock files, control-plane leases and sessions, and Gitea facts into one
// Snapshot of claims, contention, clarifications, orphans, sessions, traffic
// buckets and activity, classifies every reconcilable artifact with the exact
// kind strings of docs/formats.md, and keeps that snapshot current while the
// sources change (Live).
//
// What it owns:
//
//   - the Snapshot types and their stable JSON (`steward status --json`);
//   - Build and the per-item derivation it shares with Live: pure, with now
//     as a parameter; every derived fact keeps its Evidence (source, field,
//     value, age);
//   - Live: fsnotify-driven incremental re-reads through the sources' read
//     APIs (locks.ReadFile, leases.Reader), a heap of time deadlines so that
//     passing time re-derives only the items whose deadline passed, an
//     optional Gitea poll and a periodic full resync.
//
// Honesty: a source that is unavailable or partial never makes anything read
// as free, unowned or orphaned by its absence, and partiality is scoped to what
// it touches (an undecodable lease row makes its own item unproven, nothing
// else); process liveness is evidence only on the local host (elsewhere it is
// unknown, never dead; a DB row that records no host is judged on the DB's
// host, leases.RowHost); worktree paths
// outside <repo-root>/branches are never looked at, and a link that leaves the
// repository root is never followed (leases.WorktreeRoots.Probe, the core's rule too).
//
// What it must never do: write any source (no lock file, row or Gitea call
// that changes state), import govern, tui or cli, or decide whether an action
// is allowed — an orphan names its reconciling action by id and target
// (ActionRef), and the governed core fills Allowed and Refusal (a hook in the
// layer above). Reads happen only in Live and Load*, never in Build.
package model
