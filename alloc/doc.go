// Package alloc is the supervised system's allocation order, as pure functions: which backlog
// items a worker may take (open, unclaimed, not blocked, not awaiting a maintainer, not an
// epic or child-only container, no open dependency) and in what order (priority, then what
// closing the item unblocks, then oldest first). The rules are the seed's charter
// ("compare by priority, dependencies, urgency, impact, readiness and active claims",
// seed-digest-1 §1) and its allocator's pre-rank exclusions (seed 002, allocate_next_work:
// excluded_by_controller, epic_or_child_only_container, claimed_by_other_session;
// seed-digest-1 §5.3-5.4). The seed's sort_candidates itself is not in the seed; the
// tie-breaks after priority are ours.
//
// What it owns: eligibility and ranking of candidates it is given. The simulated workers
// (sim) and the MCP server's claim of the next runnable item (mcp) both use it.
//
// What it must never do: read or write a source, or steer: it ranks by published,
// reviewable rules only, and a worker may always claim a particular item instead.
package alloc
