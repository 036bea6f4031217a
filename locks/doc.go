// Package locks owns the supervised system's per-issue lock files: reading
// them tolerantly, assessing them with the seed's contract vocabulary, and the
// write primitives that change them.
//
// What it owns:
//
//   - the record types of a lock file (Record, WorkLease, Provenance, the
//     recovery blocks) with the seed's JSON key names, keeping unknown fields;
//   - Decode, a tolerant decoder that never panics and reports every problem
//     as a Finding with its JSON field path;
//   - ReadFile and LoadDir, which read a locks directory without ever blocking
//     (FIFOs, devices), following a symlink out of the directory, or reading a
//     huge file whole, and report each unreadable file with a reason;
//   - List, the names LoadDir reads as lock files, with Listed.Unchanged to
//     tell from one lstat whether a file read before needs reading again;
//   - Watch, the lock names the one directory watcher (package watchdir)
//     reports for the locks directory;
//   - Assess, the pure contract verdict (canonical, legacy, incomplete,
//     absent), expiration state, claimant placement and #447 eligibility;
//   - steward's file-name convention for new locks (Name, ParseName) and the
//     retired/ archive layout;
//   - the write primitives WriteCAS, Archive and Restore: compare-and-swap on
//     lock_generation + task_session_id under an flock, temp file, fsync,
//     rename, directory fsync — a crash never leaves a partial lock.
//
// What it must never do: open the control-plane DB, talk to Gitea, read a
// clock inside Assess (now is a parameter), delete a lock without archiving
// it first, or follow a path out of the directory it was given. The write
// primitives are called by package govern only; every other package reads.
package locks
