// Package lockrec is the pure part of package locks: what a lock record is and says, with
// no file, directory, process or clock behind it.
//
// What it owns:
//
//   - the record types of a lock file (Record, WorkLease, Provenance, Claimant, the
//     recovery blocks) with the seed's JSON key names, keeping unknown fields;
//   - Decode, a tolerant decoder that never panics and reports every problem as a Finding
//     with its JSON field path, and Marshal, which writes a record back in the seed's
//     key order keeping what it did not understand;
//   - Assess and ExpirationOf, the contract verdict (canonical, legacy, incomplete,
//     absent), expiration state, claimant placement and #447 eligibility, at a now the
//     caller passes;
//   - an item's identity (Key, Key.Identity, SameItem: org and repo folded);
//   - Entry and Snapshot, one file and one full scan of the locks directory as package
//     locks read them (a file's class, its record, findings, why it is unreadable), so
//     that the model and history take what locks read without importing the reader.
//
// What it must never do: import anything but the standard library's packages that do no
// IO (arch_test.go, TestPureByStructure); open, stat or list a file; read a clock or the
// environment. Reading and writing lock files is package locks'.
package lockrec
