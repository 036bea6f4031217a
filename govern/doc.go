// Package govern is steward's one path for every mutation of the supervised system's state.
//
// It owns the actions (supervisor recovery and worker claims alike), their guards, the
// fences they re-check, the roles and risk tiers they declare, and the audit log every
// attempt leaves behind. Each action is a value with two steps: Preview, which reads and
// never writes (not even an audit record), and Apply, which re-checks the preview's fences
// atomically, performs the effect and records exactly one terminal audit record.
//
// govern is the only package that calls the write primitives of locks, leases and gitea; a
// test over the module's call graph keeps it so. It never draws anything and never decides
// which work a worker takes: recovery returns an item to the pool, it does not assign it.
package govern
