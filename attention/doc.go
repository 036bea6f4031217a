// Package attention decides when a person must hear about an entry of the live snapshot
// that needs them: when it enters a human-required state, when it waits past its SLA, and
// again at most a configured number of times after that — each at most once per entry ×
// evidence × level — and when an acknowledgement or a snooze (recorded through the governed
// core) keeps it quiet.
//
// What it owns:
//
//   - Entry: one attention entry derived from a model.Snapshot (FromSnapshot): a stable key,
//     its need (model.Need), its age from the snapshot's evidence and its SLA — one entry
//     per root cause (a dead worker's orphans are one incident, its parts kept);
//   - Tracker: a state machine over successive snapshots and a clock (the time is always a
//     parameter) that turns them into Events (entered, escalated, returned, acknowledged,
//     snoozed, cleared, unavailable, recovered), deduplicated, and says which of them notify;
//   - the bytes of a terminal notification (bell, OSC 9, OSC 777, wrapped for tmux and
//     screen) from text it made safe first (termsafe), and the environment a notify command
//     is given (never a token: an entry holds none).
//
// What it must never do: read or write a source, the audit log or the acknowledgement file
// (the caller passes the marks in; govern writes them through attention.ack and
// attention.snooze), run a command (attention/notify does), or read the clock.
package attention
