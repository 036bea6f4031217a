// Command bench is steward's performance harness: it generates workspaces of 100, 1,000,
// 10,000 and 50,000 claims, measures the workbench on each — cold start to the first
// snapshot and to the first frame, one lock-file rename and one DB commit to the updated
// snapshot and the redrawn frame, key presses to the frame, idle CPU and peak RSS — and, in
// the same run, the physical limit of each: the same files read raw, the same rows by a bare
// SQL query, an empty Bubble Tea program drawing a frame of the same size. It reports each
// measure as a median and p99 over repeated runs, its ratio to its limit, how it grows with
// the fleet (the slope of log cost against log n) and whether it meets its targets.
// docs/performance.md has the table of a run and how to read it.
//
//	go run ./bench                              # the full table (about 17 minutes on 2 cores)
//	go run ./bench -sizes 10000 -pprof          # CPU and heap profiles under bench/out/pprof
//	go run ./bench -check                       # CI: ratios against bench/baseline.json
//	go run ./bench -check -write-baseline       # record a new baseline
//
// Every measure runs in a child process of its own (the harness re-executes itself with
// -child), so each peak RSS belongs to one workbench session or one limit.
//
// The workspaces are fixtures: package fleet takes one claim through the governed core and
// writes the rest directly (one DB transaction, lock files by rename). That is fixture
// generation, not a supervised mutation, and it never touches a workspace it did not create.
// The harness never edits steward's code paths; it drives the session `steward ui` runs:
// app.Open's assembly (the governed core, the live model, the source that previews every
// orphan's action and redacts steward's secrets), tui.New on its options, and the root's
// own feed (Root.Feed, which digests each snapshot off the UI goroutine as tui.Run does).
package main
