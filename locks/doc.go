// Package locks owns the supervised system's per-issue lock files on disk: reading
// them tolerantly (the records they hold are decoded and assessed by locks/lockrec),
// the index of the live locks of a directory, and the write primitives that change them.
//
// What it owns (the record itself — its types, decoding, encoding and assessment — is
// the pure package locks/lockrec):
//
//   - ReadFile and LoadDir, which read a locks directory without ever blocking
//     (FIFOs, devices), following a symlink out of the directory, or reading a
//     huge file whole, and report each unreadable file with a reason;
//   - List, the names LoadDir reads as lock files, with Listed.Unchanged to
//     tell from one lstat whether a file read before needs reading again;
//   - Watch, the lock names the one directory watcher (package watchdir)
//     reports for the locks directory;
//   - Index, the live lock files of a directory by the item each names, its views
//     (IndexView, one refresh; ViewOf, a listing already read) and Tracked, a view its
//     owner keeps current from the reads it makes anyway (the live model's);
//   - steward's file-name convention for new locks (Name, parseName) and the
//     retired/ archive layout;
//   - the write primitives WriteCAS, Archive and Restore: compare-and-swap on
//     lock_generation + task_session_id under an flock, temp file, fsync,
//     rename, directory fsync — a crash never leaves a partial lock.
//
// What it must never do: open the control-plane DB, talk to Gitea, delete a lock
// without archiving it first, or follow a path out of the directory it was given. The write
// primitives are called by package govern only; every other package reads.
package locks
