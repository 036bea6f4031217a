// Package sim runs simulated workers for `steward demo` and for tests: a small fleet that
// follows the supervised system's charter cycle — inspect the sources through their read
// APIs, choose the most valuable eligible item (priority labels, "depends on #N",
// skipping blocked, clarification-marked and claimed items), claim it through the
// governed core, heartbeat at the lease policy's cadence, work for a while, release — and
// that misbehaves at configurable rates: dying mid-claim, stalling while its process lives
// on, going for an item another worker holds (claim.refused), leaving a half-finished pull
// request, letting its worktree vanish, or asking for clarification.
//
// Around the fleet, so that a demo left alone stays like a real fleet's day (docs/demo.md):
// one worker on the supervised system's older lock tool (legacy.go, package foreign), which
// writes its legacy lock beside steward's and so makes real duplicate locks and legacy
// orphans; and the staff (staff.go): an on-call operator who applies an orphan's sanctioned
// action through the governed core once it has been on screen a while, and a maintainer who
// answers clarifications through the core and, on the in-process Gitea, merges finished work
// (closing the issue and filing a new one), closes stale pull requests, and now and then
// closes an item a worker holds. A census (census.go) books what each minute of a run
// showed, read as `steward status` reads the workspace.
//
// What it owns: the workers' decisions and their timing. Every change to coordination
// state (lock files, DB rows, Gitea comments and labels) goes through govern.Core.Run, as
// a real worker's would — through a core in this process, or (Config.Hands, the demo's
// --workers mcp) as an MCP client of a `steward mcp` process that runs it; each worker holds
// the fence its claim and heartbeats return and passes it back. sim never calls a source's
// write primitive. A worker's "process"
// is a real child process (sleep) whose pid is recorded in the claim; dying is killing it.
// A half-finished pull request is the worker's own git work, not coordination state: it
// is created through a PRMaker the caller supplies (the demo uses the in-process Gitea's
// seeding helpers; with a real Gitea there is none and workers leave no PRs). On a real
// Gitea the demo's repository, labels and issues are made through gitea.SeedRepo: sim
// never uses the Gitea SDK itself.
//
// Determinism: one math/rand/v2 source per worker, derived from the seed, and one
// discrete-event scheduler that runs every worker step in virtual-time order on one
// goroutine. The governed core's clock is the scheduler's clock (the wall time an event
// is due), so the sequence of decisions — and every timestamp written — is a function of
// the seed. Time is compressed by Speed: the lease policy is scaled through
// Workspace.Env (PolicyEnv), never by changing the process environment. A paced fleet
// never runs behind the wall clock: an event that runs late (a starved machine, a slow MCP
// round trip) shifts every later one by its lateness, so the core's clock stays the wall
// clock — a `steward mcp` serving the workers stamps with the wall clock, and a fleet that
// fell seconds behind it let every lease expire before its heartbeat. The decisions stay a
// function of the seed; only their wall times move.
//
// What it must never do: write a source directly (the legacy worker's lock files, through
// package foreign, are the one deliberate exception), choose work for a real worker, or
// import tui.
package sim
