package leases

import (
	"context"
	"database/sql"
	"encoding/json"
	"slices"
	"strconv"
	"sync"

	"steward/leases/leaserec"
)

// SQLiteReader reads a control-plane DB read-only. It never creates, migrates or
// writes the file, and never creates or writes a file beside it (no -wal, no -shm, no
// read mark): it opens the file the way its journal mode and companions allow (see
// readmode.go) and reopens it when they change. Safe for concurrent use.
type SQLiteReader struct {
	reads
	mu     sync.RWMutex // the handle: read for every read, write to (re)open or close it
	pin    *sql.Conn    // one fixed connection: PRAGMA data_version is per connection
	id     fileID       // the file opened; Replaced compares the path with it
	kind   readKind
	file   *dbFile
	held   bool    // this handle holds file's read lock (kindQuiescent, where supported)
	roSHM  bool    // this handle maps the -shm read-only (kindShared, no writer in this process)
	sig    fileSig // the file's size and mtime when opened (kindQuiescent without the lock)
	wal    fileSig // the ignored -wal's size and mtime, zero when there was none (kindQuiescent)
	shm    fileSig // the ignored -shm's (a stale one, left with no -wal), zero when none (kindQuiescent)
	epoch  int64   // counts the handles opened: the high half of DataVersion
	closed bool
}

// OpenReadOnly opens path for reading, creating nothing beside it (see SQLiteReader).
// A missing file is ErrNoDB (missing authority, never an empty inventory); a file that
// is not SQLite is ErrNotSQLite; a WAL-mode DB whose -wal has no -shm beside it is
// ErrWALIndexMissing (reading it would create the -shm). Close the Reader when done.
func OpenReadOnly(path string) (*SQLiteReader, error) {
	const op = "open read-only"
	if err := exists(op, path); err != nil {
		return nil, err
	}
	r := &SQLiteReader{reads: reads{d: sqliteSQL, path: path}}
	r.version = r.dataVersion
	if err := r.reopen(context.Background(), op); err != nil {
		return nil, err
	}
	return r, nil
}

// Close releases the Reader's connections and its read lock.
func (r *SQLiteReader) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	return r.drop()
}

// DataVersion returns a version that moves whenever another connection commits: PRAGMA
// data_version of the pinned connection, with the count of handles opened in the high
// half (a reopen starts another connection's counter), so a watcher re-reads only when
// it moved.
func (r *SQLiteReader) DataVersion(ctx context.Context) (int64, error) {
	var v int64
	err := r.do(ctx, "data_version", func() (err error) {
		v, err = r.dataVersion(ctx)
		return err
	})
	return v, err
}

func (r *SQLiteReader) dataVersion(ctx context.Context) (int64, error) {
	var v int64
	err := r.pin.QueryRowContext(ctx, "PRAGMA data_version").Scan(&v)
	return r.versionOf(v), mapErr("data_version", r.path, err)
}

func (r *SQLiteReader) versionOf(dv int64) int64 { return r.epoch<<32 | dv&0xffffffff }

// ReadOptions tunes Snapshot.
type ReadOptions struct {
	// RecentTerminal is how many of the most recent terminal leases
	// (released, expired, abandoned) to include besides every non-terminal
	// lease. Zero means defaultRecentTerminal; negative means none.
	RecentTerminal int
	// RecentEnded is how many of the most recently created sessions to include
	// besides every session that may be live (status active in any case, or
	// absent) and every session a non-terminal lease names; the rest have ended and
	// are only counted (Snapshot.SessionsOmitted). Zero means
	// DefaultRecentEnded; negative means none. The supervised system never
	// trims the sessions table: without this bound a long-running reader would
	// hold every session there ever was.
	RecentEnded int
	// Leases, when set, is handed each lease the read selects as it is read (its Work
	// filled), instead of Snapshot.Leases: a one-shot reader of a large fleet never holds
	// every row at once. A read that starts over (the DB's files changed under it) calls
	// Restart first; so does one that fails: what was handed before is void.
	Leases LeaseRows
}

// LeaseRows takes the leases of a read one at a time (ReadOptions.Leases).
type LeaseRows interface {
	Lease(leaserec.Lease)
	Restart()
}

// defaultRecentTerminal is the number of recent terminal leases Snapshot
// includes when ReadOptions.RecentTerminal is zero.
const defaultRecentTerminal = 200

// DefaultRecentEnded is the number of most recent sessions Snapshot includes
// when ReadOptions.RecentEnded is zero: the Sessions view is about sessions
// that may be live and what holds a lease; the last hundred others show the
// recent deaths and exits, and older history stays in the DB (and the audit
// log and control-plane events).
const DefaultRecentEnded = 100

// Snapshot is one consistent read of the DB (one read transaction). Each
// section carries its own Health.
type Snapshot struct {
	SchemaVersion  string
	Meta           map[string]string
	MetaHealth     leaserec.Health
	Sessions       []leaserec.Session
	SessionsHealth leaserec.Health
	// SessionsOmitted counts the ended sessions the read left out (not among
	// the ReadOptions.RecentEnded most recent, named by no non-terminal lease).
	SessionsOmitted   int
	WorkItems         []leaserec.WorkItem
	WorkItemsHealth   leaserec.Health
	Leases            []leaserec.Lease
	LeasesHealth      leaserec.Health
	Assignments       []leaserec.Assignment
	AssignmentsHealth leaserec.Health
	DataVersion       int64
}

// Snapshot reads schema_meta, sessions, work items, leases (every
// non-terminal one plus recent terminal ones, with Work filled from
// work_items) and assignments in one read transaction. It returns an error
// only when the DB as a whole is unreadable; a missing table or column
// degrades or disables that section instead.
func (r *reads) Snapshot(ctx context.Context, opt ReadOptions) (*Snapshot, error) {
	const op = "snapshot"
	if opt.Leases != nil {
		opt.Leases.Restart()
	}
	dv, err := r.version(ctx)
	if err != nil {
		return nil, err
	}
	dbtx, err := r.beginRead(ctx)
	if err != nil {
		return nil, mapErr(op, r.path, err)
	}
	defer dbtx.Rollback()
	tx := r.q(dbtx)
	info, err := r.introspect(ctx, tx)
	if err != nil {
		return nil, mapErr(op, r.path, err)
	}
	s := &Snapshot{DataVersion: dv}
	s.Meta, s.SchemaVersion, s.MetaHealth, err = readMeta(ctx, tx, info)
	if err != nil {
		return nil, mapErr(op, r.path, err)
	}
	s.WorkItems, s.WorkItemsHealth, err = readTable(ctx, tx, info, "work_items", workItemCols, "", nil,
		decodeWorkItem, func(v leaserec.WorkItem) []string { return v.Problems })
	if err != nil {
		return nil, mapErr(op, r.path, err)
	}
	if opt.Leases != nil {
		if err := s.streamLeases(ctx, tx, info, opt); err != nil {
			opt.Leases.Restart()
			return nil, mapErr(op, r.path, err)
		}
	} else {
		s.Leases, s.LeasesHealth, err = readLeases(ctx, tx, info, opt, nil)
		if err != nil {
			return nil, mapErr(op, r.path, err)
		}
		s.Sessions, s.SessionsOmitted, s.SessionsHealth, err = readSessions(ctx, tx, info, opt, namedSessions(s.Leases))
		if err != nil {
			return nil, mapErr(op, r.path, err)
		}
		attachWork(s.Leases, s.WorkItems, s.WorkItemsHealth, &s.LeasesHealth)
	}
	s.Assignments, s.AssignmentsHealth, err = readTable(ctx, tx, info, "assignments", assignmentCols, "", nil,
		decodeAssignment, func(v leaserec.Assignment) []string { return v.Problems })
	if err != nil {
		return nil, mapErr(op, r.path, err)
	}
	return s, nil
}

func readMeta(ctx context.Context, q queryer, info schemaInfo) (map[string]string, string, leaserec.Health, error) {
	h := okHealth()
	if !info.hasTable("schema_meta") {
		note(&h, "table schema_meta is absent: schema version unknown, columns read by name")
		return nil, "", h, nil
	}
	rows, err := q.QueryContext(ctx, `SELECT key, value FROM schema_meta`)
	if err != nil {
		return nil, "", h, err
	}
	defer rows.Close()
	meta := map[string]string{}
	for rows.Next() {
		var k, v sql.NullString
		if err := rows.Scan(&k, &v); err != nil {
			return nil, "", h, err
		}
		meta[k.String] = v.String
	}
	if err := rows.Err(); err != nil {
		return nil, "", h, err
	}
	ver, ok := meta[metaSchemaVersion]
	switch {
	case !ok:
		note(&h, "schema_meta has no schema_version: columns read by name")
	case !slices.Contains(knownSchemaVersions, ver):
		note(&h, "schema_version "+strconv.Quote(ver)+" is not one steward knows (4, 5): columns read by name")
	}
	return meta, ver, h, nil
}

// readTable selects the present columns of table (plus an optional WHERE
// clause) and decodes every row.
func readTable[T any](ctx context.Context, q queryer, info schemaInfo, table string, want []column,
	where string, args []any, dec func(getter) T, problems func(T) []string) ([]T, leaserec.Health, error) {
	h := okHealth()
	list, names, ok := selectList(info, table, want, &h)
	if !ok {
		return nil, h, nil
	}
	rows, err := q.QueryContext(ctx, "SELECT "+list+" FROM "+table+" "+where, args...)
	if err != nil {
		return nil, h, err
	}
	out, err := scanRows(rows, names, table, &h, dec, problems)
	return out, h, err
}

// readTableEach is readTable handing each row to put as it is read.
func readTableEach[T any](ctx context.Context, q queryer, info schemaInfo, table string, want []column,
	where string, args []any, dec func(getter) T, problems func(T) []string, put func(T)) (leaserec.Health, error) {
	h := okHealth()
	list, names, ok := selectList(info, table, want, &h)
	if !ok {
		return h, nil
	}
	rows, err := q.QueryContext(ctx, "SELECT "+list+" FROM "+table+" "+where, args...)
	if err != nil {
		return h, err
	}
	return h, scanEach(rows, names, table, &h, dec, problems, put)
}

// streamLeases is the leases and sessions of Snapshot with the leases handed to
// opt.Leases as they are read (Work filled), each read once.
func (s *Snapshot) streamLeases(ctx context.Context, tx queryer, info schemaInfo, opt ReadOptions) error {
	att := newAttacher(s.WorkItems, s.WorkItemsHealth)
	named := []string{}
	put := func(l leaserec.Lease) {
		att.attach(&l)
		if l.SessionID != "" && !l.Status.Terminal() {
			named = append(named, l.SessionID)
		}
		opt.Leases.Lease(l)
	}
	var err error
	if _, s.LeasesHealth, err = readLeases(ctx, tx, info, opt, put); err != nil {
		return err
	}
	if s.Sessions, s.SessionsOmitted, s.SessionsHealth, err = readSessions(ctx, tx, info, opt, named); err != nil {
		return err
	}
	att.notes(&s.LeasesHealth)
	return nil
}

// namedSessions are the sessions the non-terminal leases of ls name.
func namedSessions(ls []leaserec.Lease) []string {
	named := make([]string, 0, len(ls))
	for _, l := range ls {
		if l.SessionID != "" && !l.Status.Terminal() {
			named = append(named, l.SessionID)
		}
	}
	return named
}

const terminalIn = `('released', 'expired', 'abandoned')`

func readLeases(ctx context.Context, q queryer, info schemaInfo, opt ReadOptions, put func(leaserec.Lease)) (
	[]leaserec.Lease, leaserec.Health, error) {
	prob := func(v leaserec.Lease) []string { return v.Problems }
	read := func(where string, args []any) ([]leaserec.Lease, leaserec.Health, error) {
		if put != nil {
			h, err := readTableEach(ctx, q, info, "leases", leaseCols, where, args, decodeLease, prob, put)
			return nil, h, err
		}
		return readTable(ctx, q, info, "leases", leaseCols, where, args, decodeLease, prob)
	}
	live, h, err := read("WHERE status IS NULL OR "+info.fold("status")+" NOT IN "+terminalIn+" ORDER BY "+
		info.createdOrder("leases", "lease_id", ""), nil)
	if err != nil || h.Status == leaserec.HealthUnavailable {
		return live, h, err
	}
	n := opt.RecentTerminal
	if n == 0 {
		n = defaultRecentTerminal
	}
	if n < 0 {
		return live, h, nil
	}
	done, _, err := read("WHERE "+info.fold("status")+" IN "+terminalIn+" ORDER BY "+
		info.createdOrder("leases", "lease_id", " DESC")+" LIMIT ?", []any{n})
	return append(live, done...), h, err
}

// readSessions reads every session that may be live (status active or
// absent), every session a non-terminal lease in ls names, and the most recent ended ones
// (by rowid, the order they were created in), in rowid order; it counts the
// ended sessions left out. Without a status column nothing can be told ended,
// and every row is read.
func readSessions(ctx context.Context, q queryer, info schemaInfo, opt ReadOptions, named []string) (
	[]leaserec.Session, int, leaserec.Health, error) {
	prob := func(v leaserec.Session) []string { return v.Problems }
	n := opt.RecentEnded
	if n == 0 {
		n = DefaultRecentEnded
	}
	if !info.has("sessions", "status") {
		out, h, err := readTable(ctx, q, info, "sessions", sessionCols, "", nil, decodeSession, prob)
		return out, 0, h, err
	}
	// A session stays in the read when it may be live, is among the n most recent, or a
	// lease names it; the lease ids go in as a JSON array so the statement stays one.
	names, err := json.Marshal(named)
	if err != nil {
		return nil, 0, leaserec.Health{}, err
	}
	rowKey := "session_id"
	if !info.pg {
		rowKey = "rowid"
	}
	kept := `(status IS NULL OR ` + info.fold("status") + ` = 'active'
		OR ` + rowKey + ` IN (SELECT ` + rowKey + ` FROM sessions ORDER BY ` +
		info.createdOrder("sessions", "session_id", " DESC") + ` LIMIT ?)
		OR session_id IN (` + info.jsonTextArray("?") + `))`
	out, h, err := readTable(
		ctx,
		q,
		info,
		"sessions",
		sessionCols,
		"WHERE "+kept+" ORDER BY "+info.createdOrder("sessions", "session_id", ""),
		[]any{max(n, 0), string(names)},
		decodeSession,
		prob,
	)
	if err != nil || h.Status == leaserec.HealthUnavailable {
		return out, 0, h, err
	}
	rows, err := q.QueryContext(ctx, `SELECT count(*) FROM sessions WHERE NOT `+kept, max(n, 0), string(names))
	if err != nil {
		return nil, 0, h, err
	}
	defer rows.Close()
	var omitted int
	for rows.Next() {
		if err := rows.Scan(&omitted); err != nil {
			return nil, 0, h, err
		}
	}
	return out, omitted, h, rows.Err()
}

// attachWork fills each lease's Work from the work items read alongside. A
// non-terminal lease that cannot be placed on an item degrades the section: it holds
// some item, and no item can then be proven free of it. A terminal one is only noted.
func attachWork(ls []leaserec.Lease, items []leaserec.WorkItem, itemsHealth leaserec.Health, h *leaserec.Health) {
	a := newAttacher(items, itemsHealth)
	for i := range ls {
		a.attach(&ls[i])
	}
	a.notes(h)
}

// attacher is attachWork one lease at a time: attach each, then notes.
type attacher struct {
	byID           map[int64]leaserec.WorkRef
	unavailable    bool
	n, held, ended int
}

func newAttacher(items []leaserec.WorkItem, itemsHealth leaserec.Health) *attacher {
	a := &attacher{unavailable: itemsHealth.Status == leaserec.HealthUnavailable}
	if !a.unavailable {
		a.byID = make(map[int64]leaserec.WorkRef, len(items))
		for _, w := range items {
			a.byID[w.WorkItemID] = w.WorkRef
		}
	}
	return a
}

func (a *attacher) attach(l *leaserec.Lease) {
	a.n++
	if a.unavailable {
		return
	}
	w, ok := a.byID[l.WorkItemID]
	switch {
	case ok:
		l.Work = w
	case l.Status.Terminal():
		a.ended++
	default:
		a.held++
	}
}

func (a *attacher) notes(h *leaserec.Health) {
	if a.unavailable {
		if a.n > 0 {
			degrade(h, "work_items unreadable: leases have no issue/PR scope")
		}
		return
	}
	if a.held > 0 {
		degrade(h, plural(a.held, "lease")+" not ended "+agree(a.held, "references", "reference")+
			" a missing work item")
	}
	if a.ended > 0 {
		note(h, plural(a.ended, "ended lease")+" "+agree(a.ended, "references", "reference")+" a missing work item")
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
