package leases

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"math/big"
	"strings"
	"time"
)

// StoreOptions configures a read-write Store.
type StoreOptions struct {
	// Policies resolves lease durations; the zero value uses the seed's
	// defaults.
	Policies PolicySet
	// BeforeCommit, when set, runs after a transition's writes and before
	// its COMMIT (crash tests SIGKILL the process there).
	BeforeCommit func()
	// BusyBudget bounds how long a transition retries SQLITE_BUSY after
	// the busy timeout before reporting CodeBusy (default 30 s).
	BusyBudget time.Duration
	// BusyTimeout is SQLite's busy_timeout for this handle (default
	// BusyTimeout).
	BusyTimeout time.Duration
	// MaxOpenConns caps the pool (default 1: SQLite has one writer, so
	// in-process writers queue in the pool instead of polling SQLite's busy
	// handler).
	MaxOpenConns int
}

// Store runs the fenced transitions on a read-write handle. Every write is
// one BEGIN IMMEDIATE transaction. Safe for concurrent use.
type SQLiteStore struct {
	db   *sql.DB
	path string
	opt  StoreOptions
	info schemaInfo // read at open; transitions read and write through it
	// steward is set when steward's migrations created the DB (schema_meta has
	// steward_migration): only then are its timestamps written in steward's layout and
	// its connections tuned for WAL.
	steward bool
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
	if opt.BusyTimeout <= 0 {
		opt.BusyTimeout = BusyTimeout
	}
	if opt.MaxOpenConns <= 0 {
		opt.MaxOpenConns = 1
	}
	if opt.BusyBudget <= 0 {
		opt.BusyBudget = 30 * time.Second
	}
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
	return &SQLiteStore{db: db, path: path, opt: opt, info: info, steward: steward}, nil
}

// stewardsWAL reads (never sets) whether steward's migrations created the DB and
// whether it is in WAL mode.
func stewardsWAL(ctx context.Context, db *sql.DB, info schemaInfo) (steward, wal bool, err error) {
	var mode string
	if err := db.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return false, false, err
	}
	if info.has("schema_meta", "key") && info.has("schema_meta", "value") {
		var v string
		err := db.QueryRowContext(ctx, `SELECT value FROM schema_meta WHERE key = ?`, MetaStewardMigration).Scan(&v)
		switch {
		case err == nil:
			steward = v != ""
		case err != sql.ErrNoRows:
			return false, false, err
		}
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

// Policies returns the policy set the Store uses.
func (s *SQLiteStore) Policies() PolicySet { return s.opt.Policies }

// Outcome is the result of a transition: applied (Code ok) or refused with a
// stable Code and a message that says what to do instead. Refusals are not
// errors; errors are reserved for an unreadable or failing database.
type Outcome struct {
	Code    Code
	Message string
	// Lease is the lease after the write (read back in the same
	// transaction), or the lease that caused a refusal.
	Lease *Lease
	// HolderSessionID and HolderPastExpiry describe the blocking lease of a
	// claimed_by_other_session refusal.
	HolderSessionID  string
	HolderPastExpiry bool
	// Freshness is the classification an Abandon recorded or refused on.
	Freshness *FreshnessResult
	// Expired lists the lease ids an ExpireSweep ended.
	Expired []string
	// EventIDs lists the events the transition wrote.
	EventIDs []int64
}

// OK reports whether the transition applied.
func (o Outcome) OK() bool { return o.Code == CodeOK }

// txFunc does a transition's reads and writes; commit says whether to commit
// even when the outcome is a refusal (a refused claim records its event).
type txFunc func(ctx context.Context, tx *sql.Tx) (out Outcome, commit bool, err error)

// run executes fn in a BEGIN IMMEDIATE transaction, retrying SQLITE_BUSY
// with jittered backoff within BusyBudget; busy past the budget is reported
// as CodeBusy, never as a raw error. An error that may have come after the
// commit (sentError, ErrMaybeSent) is never retried.
func (s *SQLiteStore) run(ctx context.Context, op string, fn txFunc) (Outcome, error) {
	deadline := time.Now().Add(s.opt.BusyBudget)
	backoff := 2 * time.Millisecond
	for {
		out, sent, err := s.try(ctx, fn)
		switch {
		case err == nil:
			return out, nil
		case sent:
			return Outcome{}, sentError(op, s.path, err) // never run again: it may have committed
		case !isBusy(err):
			return Outcome{}, mapErr(op, s.path, err)
		}
		if ctx.Err() != nil || time.Now().Add(backoff).After(deadline) {
			return Outcome{Code: CodeBusy, Message: "the control-plane DB stayed locked for " +
				s.opt.BusyBudget.String() + "; nothing was written — retry shortly"}, nil
		}
		n, _ := rand.Int(rand.Reader, big.NewInt(int64(backoff)))
		t := time.NewTimer(backoff/2 + time.Duration(n.Int64())/2)
		select {
		case <-ctx.Done():
			t.Stop()
		case <-t.C:
		}
		if backoff < 100*time.Millisecond {
			backoff *= 2
		}
	}
}

// try runs fn in one transaction; sent reports an error that may have come after the
// transaction committed (finish: on SQLite, an error from COMMIT itself).
func (s *SQLiteStore) try(ctx context.Context, fn txFunc) (_ Outcome, sent bool, _ error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return Outcome{}, false, err
	}
	out, commit, err := fn(ctx, tx)
	return finish(tx, &progress{}, out, commit, err, s.opt.BeforeCommit)
}

// newID returns prefix + 16 random hex digits.
func newID(prefix string) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// insertEvent appends one events row and returns its id (0 when the DB has no events
// table to write to). On a table without steward's session_id and detail_json columns
// the event is written with the seed's five columns, and the session it is about goes
// into the message, so that the event still says who acted. Under a context carrying a
// governed attempt (WithAttempt) the detail names it.
func (s *SQLiteStore) insertEvent(ctx context.Context, tx *sql.Tx, workItemID int64, typ, msg, session string,
	detail any, now time.Time) (int64, error) {
	if !s.has("events", "event_type") {
		return 0, nil
	}
	var sess, det any
	if session != "" {
		sess = session
		if !s.has("events", "session_id") {
			msg += " [session " + session + "]"
		}
	}
	if d := encodeObject(markDetail(ctx, detail)); d != "" {
		det = d
	}
	ret := "event_id"
	if !s.has("events", ret) {
		ret = "rowid"
	}
	var id int64
	err := s.insert(ctx, tx, "events", []colVal{set("work_item_id", workItemID), set("event_type", typ),
		set("message", msg), set("created_at", s.ts(now)), set("session_id", sess), set("detail_json", det)},
		ret, &id)
	return id, err
}

// leaseInTx reads one lease by id inside tx (nil when absent).
func (s *SQLiteStore) leaseInTx(ctx context.Context, tx *sql.Tx, id string) (*Lease, error) {
	ls, err := leasesWhereInfo(ctx, tx, s.info, "WHERE lease_id = ?", id)
	if err != nil || len(ls) == 0 {
		return nil, err
	}
	return &ls[0], nil
}
