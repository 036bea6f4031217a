// Package contract is the behaviour every control-plane DB backend must show, written
// once and run against each (SQLite, and a real PostgreSQL server the tests start):
// every transition, every refusal with its code, the generation fence, the 32-goroutine
// claim race over two connections, and the reads after them — on steward's own schema
// and on a seed-shaped one steward did not create.
//
// A backend is an Env: its Target, its clock (the suite's on SQLite; the database's on
// PostgreSQL, which fences against its own clock) and a way to let time pass (moving
// the suite's clock, or every stored instant back). The suite never sleeps for time to
// pass. It is for tests only.
package contract
