// Package store keeps a tracker's attention state (attention.State) across restarts: one
// JSON file per surface beside the attention file, `<audit log>.attention-state-<surface>.json`
// (mode 0600), so that a `steward watch` or a workbench restarted — a crash, a deploy,
// systemd's Restart= — notifies nothing it already notified, and "first seen" and the SLA
// deadlines run on from where they were.
//
// What it owns: the file's name, its format (versioned), and its crash-safe write — a temp
// file in the same directory, written, fsync'd, renamed over the name, the directory
// fsync'd — so that a crash leaves the old state or the new one, never a torn file.
//
// What it must never do: decide anything (package attention does), write a supervised
// source, the audit log or the attention file, or read a file larger than MaxSize.
package store
