package leases

import (
	"context"
	"crypto/rand"
	"database/sql"
	"math/big"
	"strings"
	"sync/atomic"
	"time"

	"steward/leases/leaserec"
)

// writes is the one write path of both backends, as reads is the one read path: each
// transition (claim.go, transitions.go) is written once, over a write transaction (wtx)
// and the backend's dialect (info.pg). What differs between SQLite and PostgreSQL is
// said here, where it differs, and nowhere else:
//
//   - the transaction (try): SQLite's is BEGIN IMMEDIATE (the handle's _txlock), which
//     holds the DB's one write lock from a transition's first read to its COMMIT;
//     PostgreSQL's runs at READ COMMITTED beside writers on other hosts, and first takes
//     the row locks its judgement rests on (lock: a no-op on SQLite), and under a
//     governed attempt names it in its application_name (pendingName);
//   - what is run again (run): SQLITE_BUSY within BusyBudget; on PostgreSQL a
//     serialization failure or deadlock (at most maxSerializationRetries times) and a
//     lock held past lock_timeout (within BusyBudget);
//   - the clock (clock): the caller's now on SQLite, a DB that lives on one host; the
//     server's clock_timestamp() on PostgreSQL, read once the rows judged are locked;
//   - the fence in the UPDATE (fenceWhere, timeCond): on SQLite the lease id alone (the
//     write lock keeps the row as the guard saw it); on PostgreSQL the whole fence and
//     the time condition again, so that a row that moved changes nothing (moved);
//   - statements and values (wtx, timeVal, stamp, insertEvent): numbered placeholders and
//     a record of the writes sent (sent.go) on PostgreSQL; timestamps as text in the DB's
//     layout on SQLite, instants in PostgreSQL's timestamp columns;
//   - the notice (notify): PostgreSQL's NOTIFY at commit; a SQLite watcher sees the
//     file's commit instead.
type writes struct {
	db   *sql.DB
	info schemaInfo // read at open; transitions read and write through it
	path string     // the location shown in errors (a PostgreSQL URL without its password)
	opt  StoreOptions
	// steward is set when steward's migrations created the DB (schema_meta has
	// steward_migration): its timestamps are written in steward's layout, and on
	// PostgreSQL its unique indexes back the claim.
	steward bool
	retries atomic.Int64
}

// stewardMade reads (never sets) whether steward's migrations created the DB: its
// schema_meta holds a steward_migration (a DB without that table was not).
func stewardMade(ctx context.Context, db *sql.DB, info schemaInfo) (bool, error) {
	if !info.has("schema_meta", "key") || !info.has("schema_meta", "value") {
		return false, nil
	}
	var v sql.NullString
	err := db.QueryRowContext(ctx, info.bind(`SELECT value FROM schema_meta WHERE key = ?`), metaStewardMigration).Scan(&v)
	if err != nil && err != sql.ErrNoRows {
		return false, err
	}
	return v.String != "", nil
}

// Policies returns the policy set the Store uses.
func (w *writes) Policies() leaserec.PolicySet { return w.opt.Policies }

func (w *writes) has(table, col string) bool { return w.info.has(table, col) }

// wtx is one write transaction: every statement of a transition goes through it. On
// PostgreSQL it numbers the ? placeholders and records (progress) that a write is about
// to be sent: an error after that may have come after the server committed. SQLite's
// statements are local calls whose errors are definitive, and are not recorded.
type wtx struct {
	tx *sql.Tx
	d  dialect
	p  *progress
}

// sql is q as it is sent.
func (t wtx) sql(q string) string {
	if !t.d.pg {
		return q
	}
	t.p.note(q)
	return t.d.bind(q)
}

func (t wtx) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	return t.tx.QueryContext(ctx, t.sql(q), args...)
}

func (t wtx) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	return t.tx.QueryRowContext(ctx, t.sql(q), args...)
}

// exec runs q and returns how many rows it changed.
func (t wtx) exec(ctx context.Context, q string, args ...any) (int64, error) {
	res, err := t.tx.ExecContext(ctx, t.sql(q), args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// txFunc does a transition's reads and writes; commit says whether to commit even when
// the outcome is a refusal (a refused claim records its event).
type txFunc func(ctx context.Context, tx wtx) (out Outcome, commit bool, err error)

// maxSerializationRetries bounds how often a transition is run again after the
// PostgreSQL server broke it off as a serialization failure or a deadlock.
const maxSerializationRetries = 8

// run executes fn in one transaction (try) and runs it again, as a whole, after an error
// that left nothing written: SQLITE_BUSY, or on PostgreSQL a lock held past lock_timeout,
// within BusyBudget; a PostgreSQL serialization failure or deadlock at most
// maxSerializationRetries times. Either past its bound is CodeBusy, never a raw error. A
// refusal is returned as it is (a failed fence is never run again), and so is an error
// that may have come after the commit (sentError, ErrMaybeSent).
func (w *writes) run(ctx context.Context, op string, fn txFunc) (Outcome, error) {
	deadline := time.Now().Add(w.opt.BusyBudget)
	backoff := 2 * time.Millisecond
	for attempt := 1; ; attempt++ {
		out, sent, err := w.try(ctx, fn)
		switch {
		case err == nil:
			return out, nil
		case sent:
			return Outcome{}, sentError(op, w.path, err) // never run again: it may have committed
		}
		conflict, busy := w.retryable(err)
		switch {
		case !conflict && !busy:
			return Outcome{}, mapErr(op, w.path, err)
		case conflict && attempt >= maxSerializationRetries:
			return Outcome{Code: CodeBusy, Message: "the control-plane DB broke the " + op + " off " +
				itoa(int64(attempt)) + " times as conflicting with concurrent writers; nothing was written — retry shortly"}, nil
		case busy && (ctx.Err() != nil || time.Now().Add(backoff).After(deadline)):
			what := "the control-plane DB"
			if w.info.pg {
				what = "a row the " + op + " needs"
			}
			return Outcome{Code: CodeBusy, Message: what + " stayed locked for " + w.opt.BusyBudget.String() +
				"; nothing was written — retry shortly"}, nil
		}
		w.retries.Add(1)
		n, _ := rand.Int(rand.Reader, big.NewInt(int64(backoff)))
		t := time.NewTimer(backoff/2 + time.Duration(n.Int64())/2)
		select {
		case <-ctx.Done():
			t.Stop()
			return Outcome{}, mapErr(op, w.path, ctx.Err())
		case <-t.C:
		}
		if backoff < 100*time.Millisecond {
			backoff *= 2
		}
	}
}

// retryable sorts an error that left nothing written: conflict, the PostgreSQL server
// broke the transaction off (serialization failure, deadlock); busy, a lock stayed taken
// (SQLITE_BUSY, PostgreSQL's lock_timeout).
func (w *writes) retryable(err error) (conflict, busy bool) {
	if w.info.pg {
		return pgRetryable(err), pgBusy(err)
	}
	return false, isBusy(err)
}

// try runs fn in one transaction; sent reports an error that may have come after the
// transaction committed (finish). Under a governed attempt (WithAttempt) a PostgreSQL
// transaction first names the attempt in its application_name (SET LOCAL: until it
// ends), so that a verifier can see that the server is still running it
// (PGReader.Pending) after its client gave up on the answer.
func (w *writes) try(ctx context.Context, fn txFunc) (_ Outcome, sent bool, _ error) {
	var opt *sql.TxOptions // SQLite: BEGIN IMMEDIATE, by the handle's _txlock
	if w.info.pg {
		opt = &sql.TxOptions{Isolation: sql.LevelReadCommitted}
	}
	tx, err := w.db.BeginTx(ctx, opt)
	if err != nil {
		return Outcome{}, false, err
	}
	if name := pendingName(AttemptOf(ctx)); w.info.pg && name != "" {
		if _, err := tx.ExecContext(ctx, `SELECT set_config('application_name', $1, true)`, name); err != nil {
			tx.Rollback()
			return Outcome{}, false, err
		}
	}
	p := &progress{}
	out, commit, err := fn(ctx, wtx{tx: tx, d: w.info.dialect, p: p})
	return finish(tx, p, out, commit, err, w.opt.BeforeCommit)
}

// lock takes, on PostgreSQL, the locks a transition's judgement rests on (q: a SELECT
// ... FOR UPDATE, or an advisory lock), so that what it reads next stays as read until it
// commits. On SQLite the transaction's BEGIN IMMEDIATE holds the whole DB already.
func (w *writes) lock(ctx context.Context, tx wtx, q string, args ...any) error {
	if !w.info.pg {
		return nil
	}
	_, err := tx.exec(ctx, q, args...)
	return err
}

// clock is the instant a transition judges and stamps its writes at: on PostgreSQL the
// server's clock, read now (callers read it after taking their locks, so that a
// transition that waited judges at the instant it holds the rows); on SQLite the
// caller's now.
func (w *writes) clock(ctx context.Context, tx wtx, now time.Time) (time.Time, error) {
	if !w.info.pg {
		return now, nil
	}
	return dbClock(ctx, tx, w.path)
}

// failure is the sentinel of an error the backend itself is the cause of.
func (w *writes) failure() error {
	if w.info.pg {
		return errPostgres
	}
	return errSQLite
}

// ts renders t as text in this DB's layout: steward's on a DB it created, the seed's
// isoformat on any other.
func (w *writes) ts(t time.Time) string {
	if w.steward {
		return leaserec.FormatTime(t)
	}
	return t.UTC().Format(SeedTimeLayout)
}

// timeVal is the value a timestamp column of table gets for t: on SQLite its text (ts);
// on PostgreSQL the instant for a timestamp column, the seed's isoformat text for a
// text one (a DB steward did not create).
func (w *writes) timeVal(table, col string, t time.Time) any {
	if !w.info.pg {
		return w.ts(t)
	}
	switch w.info.cols[table][col] {
	case "timestamp with time zone", "timestamp without time zone":
		return t.UTC()
	}
	return t.UTC().Format(SeedTimeLayout)
}

// stamp is t as a message or an event's detail names it: on SQLite as the DB holds it
// (ts), on PostgreSQL in steward's layout.
func (w *writes) stamp(t time.Time) string {
	if w.info.pg {
		return leaserec.FormatTime(t)
	}
	return w.ts(t)
}

// timeCond is a condition comparing a timestamp column with the ? instant that follows
// it, for a PostgreSQL UPDATE to repeat its guard's judgement of time: "" on SQLite (the
// write lock keeps the row as judged) and where the column is not a timestamp (text on
// a DB steward did not create), where the row lock and the raw-text fence hold it.
func (w *writes) timeCond(table, col, op string) string {
	if !w.info.pg {
		return ""
	}
	switch w.info.cols[table][col] {
	case "timestamp with time zone", "timestamp without time zone":
		return " AND " + col + " " + op + " ?"
	}
	return ""
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

// insert writes one row of the columns table has; suffix follows the VALUES list (ON
// CONFLICT ...); returning, when set, names a column read back into dst. wrote is false
// when no row was written.
func (w *writes) insert(ctx context.Context, tx wtx, table string, vals []colVal, suffix, returning string,
	dst any) (wrote bool, _ error) {
	vals = presentIn(w.info, table, vals)
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
func (w *writes) update(ctx context.Context, tx wtx, table string, vals []colVal, where string,
	args ...any) (int64, error) {
	vals = presentIn(w.info, table, vals)
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

// insertEvent appends one events row and returns its id (0 when the DB has no events
// table to write to, or on PostgreSQL no event_id). On a table without steward's
// session_id and detail_json columns the event is written with the seed's five columns,
// and the session it is about goes into the message, so that the event still says who
// acted. Under a context carrying a governed attempt (WithAttempt) the detail names it.
func (w *writes) insertEvent(ctx context.Context, tx wtx, workItemID int64, typ, msg, session string,
	detail any, now time.Time) (int64, error) {
	if !w.has("events", "event_type") {
		return 0, nil
	}
	var sess, det any
	if session != "" {
		sess = session
		if !w.has("events", "session_id") {
			msg += " [session " + session + "]"
		}
	}
	if d := encodeObject(markDetail(ctx, detail)); d != "" {
		det = d
	}
	ret := "event_id"
	if !w.has("events", ret) {
		ret = "rowid" // SQLite's own row id; PostgreSQL has none to read back
		if w.info.pg {
			ret = ""
		}
	}
	var id int64
	_, err := w.insert(ctx, tx, "events", []colVal{set("work_item_id", workItemID), set("event_type", typ),
		set("message", msg), set("created_at", w.timeVal("events", "created_at", now)), set("session_id", sess),
		set("detail_json", det)}, "", ret, &id)
	return id, err
}

// eventsNameSessions reports whether the events table can name the sessions of an event
// (steward's session_id and detail_json columns): a refused claim is worth recording only
// where it can say who asked and who holds the item.
func (w *writes) eventsNameSessions() bool {
	return w.has("events", "session_id") && w.has("events", "detail_json")
}

// leaseInTx reads one lease by id inside tx (nil when absent).
func (w *writes) leaseInTx(ctx context.Context, tx wtx, id string) (*leaserec.Lease, error) {
	ls, err := leasesWhereInfo(ctx, tx, w.info, "WHERE lease_id = ?", id)
	if err != nil || len(ls) == 0 {
		return nil, err
	}
	return &ls[0], nil
}

// notify sends the change on notifyChannel inside tx, on PostgreSQL (delivered at
// commit); a SQLite watcher sees the commit in the file instead.
func (w *writes) notify(ctx context.Context, tx wtx, c change) error {
	if !w.info.pg {
		return nil
	}
	_, err := tx.exec(ctx, `SELECT pg_notify(?, ?)`, notifyChannel, c.encode())
	return err
}
