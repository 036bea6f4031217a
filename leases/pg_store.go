package leases

import (
	"context"
	"crypto/rand"
	"database/sql"
	"math/big"
	"strings"
	"sync/atomic"
	"time"
)

// maxSerializationRetries bounds how often a transition is run again after the server
// broke it off as a serialization failure or a deadlock.
const maxSerializationRetries = 8

// PGStore runs the fenced transitions on a PostgreSQL control-plane DB, written for
// many writers on many hosts at once rather than translated from SQLite:
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
// functions decide them). Every transition notifies NotifyChannel with what it
// changed, delivered at commit. Safe for concurrent use.
type PGStore struct {
	db      *sql.DB
	path    string
	opt     StoreOptions
	info    schemaInfo
	steward bool // steward's schema: its unique indexes back the claim
	retries atomic.Int64
}

// OpenPGStore opens the PostgreSQL DB t names for transitions. It never creates or
// alters a table (InitPG does, for steward init); a database with no control-plane
// tables is ErrNotInitialised. On a database steward did not create each transition
// writes only the columns it has and refuses schema_unsupported when it lacks one it
// cannot do without, as on SQLite; claims there serialise per item through an advisory
// lock, since no index of steward's refuses a second owner.
func OpenPGStore(ctx context.Context, t Target, opt StoreOptions) (*PGStore, error) {
	const op = "open read-write"
	if opt.BusyTimeout <= 0 {
		opt.BusyTimeout = BusyTimeout
	}
	if opt.MaxOpenConns <= 0 {
		opt.MaxOpenConns = 8
	}
	if opt.BusyBudget <= 0 {
		opt.BusyBudget = 30 * time.Second
	}
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
	s := &PGStore{db: db, path: t.String(), opt: opt, info: info}
	if info.has("schema_meta", "key") && info.has("schema_meta", "value") {
		var v sql.NullString
		err := db.QueryRowContext(ctx, `SELECT value FROM schema_meta WHERE key = $1`, MetaStewardMigration).Scan(&v)
		if err != nil && err != sql.ErrNoRows {
			db.Close()
			return nil, mapErr(op, t.String(), err)
		}
		s.steward = v.String != ""
	}
	return s, nil
}

// Close closes the Store's handle.
func (s *PGStore) Close() error { return s.db.Close() }

// Policies returns the policy set the Store uses.
func (s *PGStore) Policies() PolicySet { return s.opt.Policies }

// Retries counts the transactions run again after a serialization failure or deadlock.
func (s *PGStore) Retries() int64 { return s.retries.Load() }

func (s *PGStore) has(table, col string) bool { return s.info.has(table, col) }

// pgTx is a write transaction with the shared SQL's ? placeholders numbered. Every
// statement goes through it, and it records (progress) when a write is sent.
type pgTx struct {
	tx *sql.Tx
	p  *progress
}

func (t pgTx) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	t.p.note(q)
	return t.tx.QueryContext(ctx, pgSQL.bind(q), args...)
}

func (t pgTx) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	t.p.note(q)
	return t.tx.QueryRowContext(ctx, pgSQL.bind(q), args...)
}

func (t pgTx) exec(ctx context.Context, q string, args ...any) (int64, error) {
	t.p.note(q)
	res, err := t.tx.ExecContext(ctx, pgSQL.bind(q), args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

type pgTxFunc func(ctx context.Context, tx pgTx) (out Outcome, commit bool, err error)

// run executes fn in a READ COMMITTED transaction. A serialization failure or deadlock
// runs it again (at most maxSerializationRetries times); a lock held past lock_timeout
// is retried within BusyBudget; either past its bound is CodeBusy. Anything else is an
// error, and a refusal is returned as it is: a failed fence is never retried.
func (s *PGStore) run(ctx context.Context, op string, fn pgTxFunc) (Outcome, error) {
	deadline := time.Now().Add(s.opt.BusyBudget)
	backoff := 2 * time.Millisecond
	for attempt := 1; ; attempt++ {
		out, sent, err := s.try(ctx, fn)
		switch {
		case err == nil:
			return out, nil
		case sent:
			return Outcome{}, sentError(op, s.path, err) // never run again: it may have committed
		}
		conflict, busy := pgRetryable(err), pgBusy(err)
		switch {
		case !conflict && !busy:
			return Outcome{}, mapErr(op, s.path, err)
		case conflict && attempt >= maxSerializationRetries:
			return Outcome{Code: CodeBusy, Message: "the control-plane DB broke the " + op + " off " +
				itoa(int64(attempt)) + " times as conflicting with concurrent writers; nothing was written — retry shortly"}, nil
		case busy && (ctx.Err() != nil || time.Now().Add(backoff).After(deadline)):
			return Outcome{Code: CodeBusy, Message: "a row the " + op + " needs stayed locked for " +
				s.opt.BusyBudget.String() + "; nothing was written — retry shortly"}, nil
		}
		s.retries.Add(1)
		n, _ := rand.Int(rand.Reader, big.NewInt(int64(backoff)))
		t := time.NewTimer(backoff/2 + time.Duration(n.Int64())/2)
		select {
		case <-ctx.Done():
			t.Stop()
			return Outcome{}, mapErr(op, s.path, ctx.Err())
		case <-t.C:
		}
		if backoff < 100*time.Millisecond {
			backoff *= 2
		}
	}
}

// try runs fn in one transaction; sent reports an error that may have come after the
// server committed (finish: the connection failed once a write or the COMMIT was sent).
// Under a governed attempt (WithAttempt) the transaction first names the attempt in its
// application_name (SET LOCAL: until it ends), so that a verifier can see that the server
// is still running it (PGReader.Pending) after its client gave up on the answer.
func (s *PGStore) try(ctx context.Context, fn pgTxFunc) (_ Outcome, sent bool, _ error) {
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
	if err != nil {
		return Outcome{}, false, err
	}
	p := &progress{}
	if name := pendingName(AttemptOf(ctx)); name != "" {
		if _, err := tx.ExecContext(ctx, `SELECT set_config('application_name', $1, true)`, name); err != nil {
			tx.Rollback()
			return Outcome{}, false, err
		}
	}
	out, commit, err := fn(ctx, pgTx{tx: tx, p: p})
	return finish(tx, p, out, commit, err, s.opt.BeforeCommit)
}

// timeVal is the value a timestamp column of table gets for t: the instant for a
// timestamp column, the seed's isoformat text for a text one (a DB steward did not
// create).
func (s *PGStore) timeVal(table, col string, t time.Time) any {
	switch s.info.cols[table][col] {
	case "timestamp with time zone", "timestamp without time zone":
		return t.UTC()
	}
	return t.UTC().Format(SeedTimeLayout)
}

// timeCond is a condition comparing a timestamp column with the ? instant that follows
// it, in the statement: "" when the column is not a timestamp (text on a DB steward did
// not create), where the row lock and the raw-text fence hold it instead.
func (s *PGStore) timeCond(table, col, op string) string {
	switch s.info.cols[table][col] {
	case "timestamp with time zone", "timestamp without time zone":
		return " AND " + col + " " + op + " ?"
	}
	return ""
}

// insert writes one row of the columns table has; suffix follows the VALUES list (ON
// CONFLICT ...); returning, when set, names a column read back into dst (false when
// no row was written).
func (s *PGStore) insert(ctx context.Context, tx pgTx, table string, vals []colVal, suffix, returning string, dst any) (bool, error) {
	vals = presentIn(s.info, table, vals)
	cols := make([]string, 0, len(vals))
	marks := make([]string, 0, len(vals))
	args := make([]any, 0, len(vals))
	for _, v := range vals {
		cols = append(cols, v.col)
		if v.expr != "" {
			marks = append(marks, v.expr)
			continue
		}
		marks = append(marks, "?")
		args = append(args, v.val)
	}
	q := "INSERT INTO " + table + "(" + strings.Join(cols, ", ") + ") VALUES(" + strings.Join(marks, ", ") + ")" + suffix
	if returning == "" {
		n, err := tx.exec(ctx, q, args...)
		return n > 0, err
	}
	err := tx.QueryRowContext(ctx, q+" RETURNING "+returning, args...).Scan(dst)
	if err == sql.ErrNoRows {
		return false, nil
	}
	return err == nil, err
}

// update sets the columns table has on the rows where matches and returns how many
// rows changed (0 when table has none of the columns).
func (s *PGStore) update(ctx context.Context, tx pgTx, table string, vals []colVal, where string, args ...any) (int64, error) {
	vals = presentIn(s.info, table, vals)
	if len(vals) == 0 {
		return 0, nil
	}
	sets := make([]string, 0, len(vals))
	all := make([]any, 0, len(vals)+len(args))
	for _, v := range vals {
		if v.expr != "" {
			sets = append(sets, v.col+" = "+v.expr)
			continue
		}
		sets = append(sets, v.col+" = ?")
		all = append(all, v.val)
	}
	return tx.exec(ctx, "UPDATE "+table+" SET "+strings.Join(sets, ", ")+" "+where, append(all, args...)...)
}

// insertEvent appends one events row as SQLite's does (see SQLiteStore.insertEvent).
func (s *PGStore) insertEvent(ctx context.Context, tx pgTx, workItemID int64, typ, msg, session string,
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
	var id int64
	vals := []colVal{set("work_item_id", workItemID), set("event_type", typ), set("message", msg),
		set("created_at", s.timeVal("events", "created_at", now)), set("session_id", sess), set("detail_json", det)}
	if !s.has("events", "event_id") {
		_, err := s.insert(ctx, tx, "events", vals, "", "", nil)
		return 0, err
	}
	_, err := s.insert(ctx, tx, "events", vals, "", "event_id", &id)
	return id, err
}

// leaseInTx reads one lease by id inside tx (nil when absent).
func (s *PGStore) leaseInTx(ctx context.Context, tx pgTx, id string) (*Lease, error) {
	ls, err := leasesWhereInfo(ctx, tx, s.info, "WHERE lease_id = ?", id)
	if err != nil || len(ls) == 0 {
		return nil, err
	}
	return &ls[0], nil
}

// eventsNameSessions: see SQLiteStore.eventsNameSessions.
func (s *PGStore) eventsNameSessions() bool {
	return s.has("events", "session_id") && s.has("events", "detail_json")
}

// presentIn keeps the values whose column table has.
func presentIn(info schemaInfo, table string, vals []colVal) []colVal {
	out := vals[:0:0]
	for _, v := range vals {
		if info.has(table, v.col) {
			out = append(out, v)
		}
	}
	return out
}
