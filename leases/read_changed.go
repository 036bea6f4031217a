package leases

import (
	"context"
	"database/sql"
	"slices"
	"sort"
	"strings"

	"steward/leases/leaserec"
)

// Scope names the rows a batch of commits touched, as their events tell: the
// work items the events are about and the leases and sessions they name. A
// watcher re-reads a Scope instead of the whole Snapshot, so the cost of one
// commit follows the size of the change, not of the database.
type Scope struct {
	// WorkItemIDs are re-read, with every active lease on them.
	WorkItemIDs []int64
	// LeaseIDs are re-read by id, whatever their status (a lease that ended
	// is read back as ended; one absent from the result has no row).
	LeaseIDs []string
	// SessionIDs are re-read by id; the sessions holding the leases read are
	// added.
	SessionIDs []string
}

// Scoped is one consistent read (one read transaction) of a Scope. A row
// asked for by id and absent from the result has no row in the database.
// Each section carries its own Health, as in Snapshot; Work is filled on
// every lease whose work item is readable.
type Scoped struct {
	Leases          []leaserec.Lease
	LeasesHealth    leaserec.Health
	Sessions        []leaserec.Session
	SessionsHealth  leaserec.Health
	WorkItems       []leaserec.WorkItem
	WorkItemsHealth leaserec.Health
	// SessionIDs are the session ids asked for: Scope.SessionIDs plus the
	// sessions of the leases read, sorted.
	SessionIDs []string
}

// VersionedEvents is PRAGMA data_version and the events past a cursor, read
// in one read transaction: the events are exactly those committed up to that
// data_version. A data_version that moved with no new event is then a commit
// that wrote no event (a foreign writer), never a race between the two reads.
type VersionedEvents struct {
	DataVersion int64
	Events      []leaserec.Event
	Health      leaserec.Health
	// More is set when limit events were returned: more may follow.
	More bool
}

// EventsAtVersion reads data_version and up to limit events with event_id >
// cursor (in id order; limit <= 0 means 1000) in one read transaction on the
// Reader's pinned connection (data_version is per connection: compare it only
// with values from DataVersion or EventsAtVersion of the same Reader).
func (r *SQLiteReader) EventsAtVersion(ctx context.Context, cursor int64, limit int) (VersionedEvents, error) {
	var out VersionedEvents
	err := r.do(ctx, "events", func() (err error) {
		out, err = r.eventsAtVersion(ctx, cursor, limit)
		return err
	})
	return out, err
}

func (r *SQLiteReader) eventsAtVersion(ctx context.Context, cursor int64, limit int) (VersionedEvents, error) {
	tx, err := r.pin.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return VersionedEvents{}, mapErr("events", r.path, err)
	}
	defer tx.Rollback()
	// The first statement starts the read transaction: the version is that
	// of the snapshot the events are read from.
	var version int64
	if err := tx.QueryRowContext(ctx, "PRAGMA data_version").Scan(&version); err != nil {
		return VersionedEvents{}, mapErr("events", r.path, err)
	}
	out, err := r.eventsAfter(ctx, tx, cursor, limit)
	out.DataVersion = r.versionOf(version)
	return out, mapErr("events", r.path, err)
}

// activeCond selects the active leases, in any case, the way the expression index
// leases_item_active (migration 0003) is written, so that it serves the lookup.
func activeCond(d dialect) string { return d.fold("status") + " = 'active' AND " }

// scopeChunk bounds the ids in one IN (...) list, well under SQLite's
// variable limit.
const scopeChunk = 500

// ReadScope reads the rows of sc in one read transaction, each by an indexed
// lookup: leases by primary key and by the partial index
// leases_item_active (status folded = 'active' AND work_item_id IN ...),
// sessions and work items by primary key. It costs what the scope holds,
// whatever the size of the tables. It returns an error only when the DB as a
// whole is unreadable; a missing table or column degrades that section.
//
// A lease with a status outside the four known ones (never written by
// steward; the schema's CHECK refuses it) is found by ReadScope only when it
// is named by id; a full Snapshot reads every non-terminal lease.
func (r *reads) ReadScope(ctx context.Context, sc Scope) (*Scoped, error) {
	const op = "read scope"
	dbtx, err := r.beginRead(ctx)
	if err != nil {
		return nil, mapErr(op, r.path, err)
	}
	defer dbtx.Rollback()
	tx := r.q(dbtx)
	info, err := r.introspect(ctx, tx, "leases", "sessions", "work_items")
	if err != nil {
		return nil, mapErr(op, r.path, err)
	}
	out := &Scoped{LeasesHealth: okHealth(), SessionsHealth: okHealth(), WorkItemsHealth: okHealth()}
	if out.Leases, err = scopeLeases(ctx, tx, info, sc, &out.LeasesHealth); err != nil {
		return nil, mapErr(op, r.path, err)
	}
	items := map[int64]bool{}
	for _, id := range sc.WorkItemIDs {
		items[id] = true
	}
	sessions := map[string]bool{}
	for _, id := range sc.SessionIDs {
		if id != "" {
			sessions[id] = true
		}
	}
	for _, l := range out.Leases {
		items[l.WorkItemID] = true
		if l.SessionID != "" {
			sessions[l.SessionID] = true
		}
	}
	out.SessionIDs = setKeys(sessions)
	out.WorkItems, err = readIDs(ctx, tx, info, "work_items", workItemCols, "work_item_id", int64Args(items),
		&out.WorkItemsHealth, decodeWorkItem, func(v leaserec.WorkItem) []string { return v.Problems })
	if err != nil {
		return nil, mapErr(op, r.path, err)
	}
	out.Sessions, err = readIDs(ctx, tx, info, "sessions", sessionCols, "session_id", stringArgs(out.SessionIDs),
		&out.SessionsHealth, decodeSession, func(v leaserec.Session) []string { return v.Problems })
	if err != nil {
		return nil, mapErr(op, r.path, err)
	}
	attachWork(out.Leases, out.WorkItems, out.WorkItemsHealth, &out.LeasesHealth)
	return out, nil
}

// scopeLeases reads the leases named by id and the active leases on the
// scope's work items, each lease once, in lease id order.
func scopeLeases(ctx context.Context, q queryer, info schemaInfo, sc Scope,
	h *leaserec.Health) ([]leaserec.Lease, error) {
	list, names, ok := selectList(info, "leases", leaseCols, h)
	if !ok {
		return nil, nil
	}
	ids := map[string]bool{}
	for _, id := range sc.LeaseIDs {
		if id != "" {
			ids[id] = true
		}
	}
	items := map[int64]bool{}
	for _, id := range sc.WorkItemIDs {
		items[id] = true
	}
	out, err := byIDs(ctx, q, list, names, "leases", "lease_id", stringArgs(setKeys(ids)), decodeLease, "")
	if err != nil {
		return nil, err
	}
	if info.has("leases", "work_item_id") {
		active, err := byIDs(
			ctx,
			q,
			list,
			names,
			"leases",
			"work_item_id",
			int64Args(items),
			decodeLease,
			activeCond(info.dialect),
		)
		if err != nil {
			return nil, err
		}
		for _, l := range active {
			if !ids[l.LeaseID] {
				ids[l.LeaseID] = true
				out = append(out, l)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].LeaseID < out[j].LeaseID })
	countProblems(out, "leases", h, func(v leaserec.Lease) []string { return v.Problems })
	return out, nil
}

// readIDs reads the rows of table whose key column is in ids.
func readIDs[T any](ctx context.Context, q queryer, info schemaInfo, table string, want []column, key string,
	ids []any, h *leaserec.Health, dec func(getter) T, problems func(T) []string) ([]T, error) {
	list, names, ok := selectList(info, table, want, h)
	if !ok {
		return nil, nil
	}
	out, err := byIDs(ctx, q, list, names, table, key, ids, dec, "")
	countProblems(out, table, h, problems)
	return out, err
}

// byIDs selects list from table where key is in ids, in chunks; cond (ending
// in AND) goes in front of the IN list, so that a partial index whose WHERE
// it matches serves the lookup.
func byIDs[T any](ctx context.Context, q queryer, list string, names []string, table, key string, ids []any,
	dec func(getter) T, cond string) ([]T, error) {
	var out []T
	var ignore leaserec.Health // problems are counted once over the merged rows
	for len(ids) > 0 {
		n := min(len(ids), scopeChunk)
		rows, err := q.QueryContext(ctx, scopeQuery(list, table, cond, key, n), ids[:n]...)
		if err != nil {
			return nil, err
		}
		got, err := scanRows(rows, names, table, &ignore, dec, func(T) []string { return nil })
		if err != nil {
			return nil, err
		}
		out = append(out, got...)
		ids = ids[n:]
	}
	return out, nil
}

// countProblems degrades h as scanRows does when rows have problems.
func countProblems[T any](rows []T, table string, h *leaserec.Health, problems func(T) []string) {
	bad := 0
	for _, v := range rows {
		if len(problems(v)) > 0 {
			bad++
		}
	}
	if bad > 0 {
		note(h, plural(bad, table+" row")+rowProblems)
	}
}

// introspectTables is introspect for the named tables only, in one query: a
// table absent from the result is absent from the database.
func introspectTables(ctx context.Context, q queryer, tables ...string) (schemaInfo, error) {
	args := make([]any, len(tables))
	for i, t := range tables {
		args[i] = t
	}
	rows, err := q.QueryContext(ctx, `SELECT m.name, p.name, p.type FROM sqlite_master AS m, pragma_table_info(m.name) AS p
		WHERE m.type = 'table' AND m.name IN (`+strings.TrimSuffix(strings.Repeat("?, ", len(tables)), ", ")+`)`, args...)
	if err != nil {
		return schemaInfo{}, err
	}
	return scanColumns(rows, sqliteSQL)
}

// scopeQuery is the SELECT of byIDs for n ids.
func scopeQuery(list, table, cond, key string, n int) string {
	return "SELECT " + list + " FROM " + table + " WHERE " + cond + key + " IN (" +
		strings.TrimSuffix(strings.Repeat("?, ", n), ", ") + ")"
}

func setKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func stringArgs(ids []string) []any {
	out := make([]any, len(ids))
	for i, id := range ids {
		out[i] = id
	}
	return out
}

func int64Args(m map[int64]bool) []any {
	ids := make([]int64, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	out := make([]any, len(ids))
	for i, id := range ids {
		out[i] = id
	}
	return out
}

// rowProblems ends the reason scanRows gives for rows with undecodable values.
const rowProblems = " with undecodable values (see each row's Problems)"

// ScopeAgrees reports whether a section's health from a ReadScope is
// explained by the same section's health from the last full Snapshot: ok, or
// degraded only for reasons the full read gave too (a missing column, rows
// with undecodable values — counted over fewer rows). A new reason, or a
// section now unavailable, is not explained: read the Snapshot again.
func ScopeAgrees(scoped, full leaserec.Health) bool {
	if scoped.Status == leaserec.HealthOK || scoped.Status == "" {
		return true
	}
	if scoped.Status != full.Status {
		return false
	}
	for _, r := range scoped.Reasons {
		if slices.Contains(full.Reasons, r) {
			continue
		}
		if strings.HasSuffix(r, rowProblems) && slices.ContainsFunc(full.Reasons, func(f string) bool {
			return strings.HasSuffix(f, rowProblems)
		}) {
			continue
		}
		return false
	}
	return true
}
