// Package leases owns the control-plane database (SQLite or PostgreSQL) as steward reads
// and writes it: its schema as versioned
// embedded migrations, tolerant read-only readers for real databases, and the
// fenced transitions (claim, heartbeat, release, expire sweep, abandon,
// reclaim), each written once for both backends (writes.go: a write transaction and the
// dialect) and run as one transaction — BEGIN IMMEDIATE on SQLite, READ COMMITTED with
// row locks and the server's clock on PostgreSQL.
//
// Readers open the database read-only and never create it: a missing file is missing
// authority (ErrNoDB), never an empty inventory. Nor do they create or change any file
// beside it: a reader looks at the journal mode and the -wal and -shm first and opens the
// file the one way that writes nothing (readmode.go: mode=ro for a rollback journal, the
// -shm mapped read-only beside live writers, immutable under a held shared lock for a WAL
// DB closed cleanly; a -wal that only a new -shm could read is refused,
// ErrWALIndexMissing), and reopens when that changes. A missing key
// column degrades that section with a reason (Health); a missing enrichment
// column is a note and the section stays ok; nothing ever reads as "nothing
// there". Statuses, roles and work kinds are compared folded (leaserec.Fold), as the
// seed compares them, in readers and inside every transaction.
//
// What a row is and says — the row types, statuses, timestamps, the central lease
// policy (how long a lease lives, with GITEA_LEASE_POLICY_<CLASS>_<FIELD> overrides),
// freshness (Classify, SessionLive: pure, now is a parameter) and Health — is the pure
// leaf leases/leaserec, which the model and history import instead of this package.
//
// The supervised system's own DB is never changed except by a transition's
// effect: opening keeps the file's journal mode and schema, each transition
// writes only the columns the DB has, and one that cannot be done safely
// without a missing column is refused (CodeSchemaUnsupported) by
// Reader.Supports and by the transition alike.
//
// The transition functions are called by govern only; every guard they run
// inside their transaction is exported as a pure Check function so that a
// read-only preview refuses exactly as the apply would. Refusals are values
// (Outcome with a stable Code), not errors; SQLITE_BUSY never escapes raw.
//
// It also makes the two local observations a lease's freshness takes as evidence:
// process liveness (Liveness, kill(pid, 0) on this host) and worktree presence
// (WorktreeRoots.Probe: lstat only, inside the repository root, never through a link
// that leaves it) — the one rule the live model and the governed core share.
//
// WatchDB watches the DB's directory for the DB, its -wal and its -journal with the
// one directory watcher (package watchdir); a change is a hint to confirm with
// Reader.DataVersion.
//
// leases never touches lock files or Gitea, and writes nothing outside the
// transition functions and Migrate.
package leases
