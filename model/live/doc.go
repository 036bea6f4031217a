// Package live owns the live part of steward's model: reading the sources and
// keeping a model.Snapshot current while they change.
//
// What it owns:
//
//   - Load, LoadDB and LoadGitea: one read of each source through
//     its read API (locks.LoadDir, leases.Reader, the Gitea client's reads),
//     turned into a model.Input for model.Build (`steward status`);
//   - Probe: the observations that need IO — process liveness (kill(pid, 0),
//     through leases.Liveness, on this host only) and worktree presence
//     (through leases.WorktreeRoots.Probe: only under <repo-root>/branches,
//     never through a link that leaves the repository root — the governed
//     core's rule);
//   - Model: the watchers on the lock directory and the DB (locks.Watch and
//     leases.WatchDB, both the one watchdir watcher), the loop that re-reads only what changed (one lock file
//     with locks.ReadFile, a periodic listing with locks.List, a scoped or
//     full read of the DB — the periodic full read on a reader of its own,
//     beside the loop) and feeds a model.Engine, the re-probe of local
//     owners and worktrees, the Gitea poll, and the publishing of immutable
//     snapshots.
//
// A DB row that records no host is judged on the DB's host (leases.RowHost);
// elsewhere liveness is unknown, never dead.
//
// What it must never do: write any source (no lock file, row or Gitea call
// that changes state), read the lock directory or the DB except through the
// locks and leases read APIs, derive or classify anything itself (that is
// model's), import govern, tui or cli, or decide whether an action is allowed.
package live
