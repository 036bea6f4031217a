package leases

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"strings"
	"time"

	"steward/leases/leaserec"
)

// StoreOptions configures a read-write Store.
type StoreOptions struct {
	// Policies resolves lease durations; the zero value uses the seed's
	// defaults.
	Policies leaserec.PolicySet
	// BeforeCommit, when set, runs after a transition's writes and before
	// its COMMIT (crash tests SIGKILL the process there).
	BeforeCommit func()
	// BusyBudget bounds how long a transition retries SQLITE_BUSY after
	// the busy timeout before reporting CodeBusy (default 30 s).
	BusyBudget time.Duration
	// BusyTimeout is SQLite's busy_timeout for this handle (default
	// busyTimeout).
	BusyTimeout time.Duration
	// MaxOpenConns caps the pool (default 1 on SQLite: it has one writer, so
	// in-process writers queue in the pool instead of polling SQLite's busy
	// handler; 8 on PostgreSQL).
	MaxOpenConns int
}

// withDefaults fills in the options left zero; conns is the backend's pool size.
func (o StoreOptions) withDefaults(conns int) StoreOptions {
	if o.BusyTimeout <= 0 {
		o.BusyTimeout = busyTimeout
	}
	if o.MaxOpenConns <= 0 {
		o.MaxOpenConns = conns
	}
	if o.BusyBudget <= 0 {
		o.BusyBudget = 30 * time.Second
	}
	return o
}

// SQLiteStore runs the fenced transitions (writes) on a read-write handle. Every
// transition is one BEGIN IMMEDIATE transaction. Safe for concurrent use.
type SQLiteStore struct {
	writes
	// unregister ends the Store's registration as a writer of this process (see
	// writerOpening).
	unregister func()
}

// OpenReadWrite opens an existing DB for transitions with busy_timeout and
// _txlock=immediate (every transaction BEGIN IMMEDIATE). It never creates the file
// (ErrNoDB) and never changes it by opening: the journal mode stays the file's own (a
// DB steward did not create keeps its rollback journal), nothing is migrated, and no
// pragma that persists in the file is set. A DB steward created (Migrate: WAL) also gets
// synchronous=NORMAL and foreign_keys=1. Each transition writes only the columns the
// DB has and refuses (CodeSchemaUnsupported) when it lacks one it cannot do without.
func OpenReadWrite(path string, opt StoreOptions) (*SQLiteStore, error) {
	const op = "open read-write"
	if err := exists(op, path); err != nil {
		return nil, err
	}
	ctx := context.Background()
	opt = opt.withDefaults(1)
	done := writerOpening(path)
	s, err := openReadWrite(ctx, op, path, opt)
	if err != nil {
		done()
		return nil, err
	}
	s.unregister = done
	return s, nil
}

func openReadWrite(ctx context.Context, op, path string, opt StoreOptions) (*SQLiteStore, error) {
	db, err := open(ctx, op, path, "rw", dsnOpts{immediate: true}, opt.BusyTimeout)
	if err != nil {
		return nil, err
	}
	info, err := introspect(ctx, db)
	if err != nil {
		db.Close()
		return nil, mapErr(op, path, err)
	}
	steward, wal, err := stewardsWAL(ctx, db, info)
	if err != nil {
		db.Close()
		return nil, mapErr(op, path, err)
	}
	if steward && wal {
		db.Close()
		if db, err = open(ctx, op, path, "rw", dsnOpts{immediate: true, tuned: true}, opt.BusyTimeout); err != nil {
			return nil, err
		}
	}
	db.SetMaxOpenConns(opt.MaxOpenConns)
	return &SQLiteStore{writes: writes{db: db, info: info, path: path, opt: opt, steward: steward}}, nil
}

// stewardsWAL reads (never sets) whether steward's migrations created the DB and
// whether it is in WAL mode.
func stewardsWAL(ctx context.Context, db *sql.DB, info schemaInfo) (steward, wal bool, err error) {
	var mode string
	if err := db.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return false, false, err
	}
	if steward, err = stewardMade(ctx, db, info); err != nil {
		return false, false, err
	}
	return steward, strings.EqualFold(mode, "wal"), nil
}

// Close closes the Store's handle.
func (s *SQLiteStore) Close() error {
	err := s.db.Close()
	if s.unregister != nil {
		s.unregister()
	}
	return err
}

// Outcome is the result of a transition: applied (Code ok) or refused with a
// stable Code and a message that says what to do instead. Refusals are not
// errors; errors are reserved for an unreadable or failing database.
type Outcome struct {
	Code    Code
	Message string
	// Lease is the lease after the write (read back in the same
	// transaction), or the lease that caused a refusal.
	Lease *leaserec.Lease
	// HolderSessionID and HolderPastExpiry describe the blocking lease of a
	// claimed_by_other_session refusal.
	HolderSessionID  string
	HolderPastExpiry bool
	// Freshness is the classification an Abandon recorded or refused on.
	Freshness *leaserec.FreshnessResult
	// Expired lists the lease ids an ExpireSweep ended.
	Expired []string
	// EventIDs lists the events the transition wrote.
	EventIDs []int64
}

// OK reports whether the transition applied.
func (o Outcome) OK() bool { return o.Code == CodeOK }

// newID returns prefix + 16 random hex digits.
func newID(prefix string) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}
