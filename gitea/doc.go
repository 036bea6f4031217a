// Package gitea is steward's only door to a Gitea server: it reads facts (clarification
// items, blocked items, issue and pull-request state, branches) and offers a handful of
// plainly named write primitives that only the governed core (govern/) may call. No other
// package imports the Gitea SDK (arch_test.go, TestOneGiteaDoor).
//
// SeedRepo makes a demo's fixtures on a real server (a repository, labels, issues for
// `steward demo --gitea-url`): set-up, not an action on a supervised repository; only the
// demo's simulator may call it.
//
// What it owns: login selection (tea CLI config or explicit URL and token), the access
// token (a [Token] that never prints), paginated reads that report their [Health]
// (ok, partial or unavailable, never an empty "nothing found" after a failure), and the
// classification of write failures into not sent, outcome unknown and refused ([Classify]).
//
// What it must never do: print, log or return the token (every error leaving the package is
// scrubbed of it and of URL userinfo); decide anything (no routing, no retries of writes);
// import tui, govern, locks or leases.
//
// The records it reads and the comment marker it writes (Issue, Comment, Thread,
// Clarification, Mark) are the pure leaf gitea/gitearec, which the model and history import
// instead of this package. The in-process API subset for demos lives in gitea/fakegitea;
// a real Gitea for tests is started by gitea/giteatest; gitea/contract holds the suite that
// runs against both.
package gitea
