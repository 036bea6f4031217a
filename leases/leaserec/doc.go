// Package leaserec is the pure part of package leases: what the control-plane DB's rows are
// and say, with no database, file, process or clock behind it.
//
// What it owns:
//
//   - the row types as leases reads them (Lease, Session, WorkItem, WorkRef, Assignment,
//     Event), their statuses and work kinds, and Fold, the one way the supervised system
//     compares statuses, roles and work kinds (trimmed, lower-cased);
//   - Timestamp and ParseTimestamp, a timestamp column as read (raw text kept for fences,
//     never a zero time standing in for an unparseable one), and FormatTime, how steward
//     writes one;
//   - the central lease policy (Policy, PolicySet, DefaultPolicies, LoadPolicies over a
//     lookup the caller passes, classOf) as the seed's lease-policy table defines it;
//   - Classify and SessionLive, a lease's freshness and a session's liveness from the
//     evidence the caller gathered (ProcessState, WorktreeState) at a now the caller
//     passes;
//   - Health, how fully a section of the DB was read (ok, degraded, unavailable), and
//     DetailAttempt, the event detail key naming a governed attempt;
//
// so that the model and history take what leases read without importing the reader, its
// database drivers or its watcher.
//
// What it must never do: import anything but the standard library's packages that do no
// IO (arch_test.go, TestPureByStructure); open a database or a file; look at a process or
// the environment (LoadPolicies takes a lookup function); read a clock. Reading the DB,
// the transitions, liveness (kill(pid, 0)) and the worktree probe are package leases'.
package leaserec
