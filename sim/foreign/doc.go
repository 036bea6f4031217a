// Package foreign is the demo's one writer that does not go through steward's governed core,
// on purpose: it stands for a worker running an older release of the supervised system's own
// lock tool (the pre-#953 bootstrap), which real fleets still have during a migration. That
// tool writes its lock file straight into the shared lock directory, under its own file name,
// in place (no temporary file, no rename, no flock), in the legacy shape the seed's fixtures
// show (claimant at the top level with username and profile, no work_lease, no
// lock_provenance, no expiry, lease_id null, pid and session_pid; seed #953 §2.7, the
// "legacy/bootstrap placement"), and it never touches the control-plane DB.
//
// Written beside a lock steward's core wrote for the same item, its file is a real
// duplicate-live-lock, and steward reports it as such; the file itself is a legacy-lock and a
// lock-never-expires; killed mid-write it leaves an unreadable lock. None of that is staged:
// it is what the supervised system's own tools do when they bypass steward.
//
// What it owns: the bytes of those legacy lock files, their names, and writing or removing
// them in a lock directory. The decisions (which item, when, when to die) are package sim's.
//
// What it must never do: write anything but its own legacy lock files in the lock directory
// it is given (never a canonical lock, a DB row or a Gitea item), follow a path out of that
// directory, or be used outside the demo and its tests (arch_test.go checks that only sim
// imports it).
package foreign
