package leases

import "context"

// PGStore runs the fenced transitions (writes) on a PostgreSQL control-plane DB. The
// one write path is written for many writers on many hosts at once, and on PostgreSQL
// the dialect makes it so:
//
//   - a claim is one conditional INSERT ... SELECT ... WHERE NOT EXISTS (an active
//     lease on the item) ON CONFLICT (the partial unique index
//     leases_one_active_per_item) DO NOTHING, returning the new lease_generation_id:
//     of two claims racing, the index lets exactly one row be written, never a
//     select-then-write; before it the claim locks the item's active lease row, so
//     that the clock it stamps the lease with is read after any release in flight;
//   - every fenced transition locks the lease row, reads the database's clock
//     (clock_timestamp(), never a node's), runs the same guard as SQLite's, and writes
//     with an UPDATE whose WHERE repeats the fence — lease id, active status (folded),
//     holder, lease_generation_id, the expiry it read — and the time condition against
//     that clock (expires_at > t for a heartbeat, <= t for a reclaim or sweep);
//   - transactions run at READ COMMITTED; a serialization failure or deadlock runs the
//     whole transaction again, at most maxSerializationRetries times; a refusal (a
//     failed fence) is an Outcome and is never retried.
//
// The now parameter of every transition is ignored: PostgreSQL transitions fence on
// the database's clock. Refusal codes and messages are SQLite's (the same Check
// functions decide them). Every transition notifies notifyChannel with what it
// changed, delivered at commit. Safe for concurrent use.
type PGStore struct {
	writes
}

// OpenPGStore opens the PostgreSQL DB t names for transitions. It never creates or
// alters a table (InitPG does, for steward init); a database with no control-plane
// tables is ErrNotInitialised. On a database steward did not create each transition
// writes only the columns it has and refuses schema_unsupported when it lacks one it
// cannot do without, as on SQLite; claims there serialise per item through an advisory
// lock, since no index of steward's refuses a second owner.
func OpenPGStore(ctx context.Context, t Target, opt StoreOptions) (*PGStore, error) {
	const op = "open read-write"
	opt = opt.withDefaults(8)
	db, err := openPG(ctx, op, t, false, opt.BusyTimeout)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(opt.MaxOpenConns)
	db.SetMaxIdleConns(opt.MaxOpenConns)
	info, err := introspectPG(ctx, pgQueryer{db})
	if err != nil {
		db.Close()
		return nil, mapErr(op, t.String(), err)
	}
	if len(info.cols) == 0 {
		db.Close()
		return nil, &DBError{Op: op, Path: t.String(), Err: ErrNotInitialised, Detail: "run steward init --db on it first"}
	}
	steward, err := stewardMade(ctx, db, info)
	if err != nil {
		db.Close()
		return nil, mapErr(op, t.String(), err)
	}
	return &PGStore{writes{db: db, info: info, path: t.String(), opt: opt, steward: steward}}, nil
}

// Close closes the Store's handle.
func (s *PGStore) Close() error { return s.db.Close() }

// Retries counts the transactions run again after a serialization failure or deadlock.
func (s *PGStore) Retries() int64 { return s.retries.Load() }
