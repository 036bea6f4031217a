package leases

import (
	"context"
	"database/sql"

	"steward/leases/leaserec"
)

// EventsSince returns up to limit events with event_id > cursor in id order,
// for incremental watching (limit <= 0 means 1000). The next cursor is the
// last returned EventID.
func (r *reads) EventsSince(ctx context.Context, cursor int64, limit int) ([]leaserec.Event, leaserec.Health, error) {
	page, err := r.eventsAfter(ctx, r.q(r.db), cursor, limit)
	return page.Events, page.Health, mapErr("events", r.path, err)
}

// eventsAfter reads through q up to limit events with event_id > cursor in id order
// (limit <= 0 means 1000), the one events read of both backends: it fills Events,
// Health and More, and leaves DataVersion to the caller.
func (r *reads) eventsAfter(ctx context.Context, q queryer, cursor int64, limit int) (VersionedEvents, error) {
	var out VersionedEvents
	if limit <= 0 {
		limit = 1000
	}
	info, err := r.introspect(ctx, q, "events")
	if err != nil {
		return out, err
	}
	out.Events, out.Health, err = readTable(ctx, q, info, "events", eventCols,
		"WHERE event_id > ? ORDER BY event_id LIMIT ?", []any{cursor, limit},
		decodeEvent, func(v leaserec.Event) []string { return v.Problems })
	out.More = len(out.Events) == limit
	return out, err
}

// LeaseByID reads one lease (with Work filled when work_items is readable).
// found is false when no row has that id. A leases table too damaged to
// read is errNoTable.
func (r *reads) LeaseByID(ctx context.Context, id string) (l leaserec.Lease, found bool, err error) {
	ls, err := r.leasesWhere(ctx, "WHERE lease_id = ?", id)
	if err != nil || len(ls) == 0 {
		return leaserec.Lease{}, false, err
	}
	return ls[0], true, nil
}

// LeasesForWorkItem returns every non-terminal lease on the work item named
// by ref (normally at most one; more is a concurrent-active-lease collision),
// the item found by its identity (org and repo case-insensitive; every
// work_items row of it, should the DB hold it under two spellings).
func (r *reads) LeasesForWorkItem(ctx context.Context, ref leaserec.WorkRef) ([]leaserec.Lease, error) {
	cond, args := itemIdentity(r.d, ref)
	return r.leasesWhere(ctx, `WHERE (status IS NULL OR `+r.d.fold("status")+` NOT IN `+terminalIn+`)
		AND work_item_id IN (SELECT work_item_id FROM work_items WHERE `+cond+`)`, args...)
}

// LeaseHistory returns every lease on the work item named by ref, whatever its status
// (oldest first): what a verifier reads to find an attempt's lease after it ended.
func (r *reads) LeaseHistory(ctx context.Context, ref leaserec.WorkRef) ([]leaserec.Lease, error) {
	cond, args := itemIdentity(r.d, ref)
	return r.leasesWhere(ctx, `WHERE work_item_id IN (SELECT work_item_id FROM work_items WHERE `+cond+`)
		ORDER BY created_at, lease_id`, args...)
}

// HasColumn reports whether the DB's table has the column (false when the table is
// absent): a verifier asks before it reads the absence of a mark as proof — a DB without
// events.detail_json or leases.provenance_json cannot carry one.
func (r *reads) HasColumn(ctx context.Context, table, col string) (bool, error) {
	info, err := r.introspect(ctx, r.q(r.db), table)
	if err != nil {
		return false, mapErr("schema", r.path, err)
	}
	return info.has(table, col), nil
}

func (r *reads) leasesWhere(ctx context.Context, where string, args ...any) ([]leaserec.Lease, error) {
	const op = "read lease"
	dbtx, err := r.beginRead(ctx)
	if err != nil {
		return nil, mapErr(op, r.path, err)
	}
	defer dbtx.Rollback()
	tx := r.q(dbtx)
	info, err := r.introspect(ctx, tx, "leases", "work_items")
	if err != nil {
		return nil, mapErr(op, r.path, err)
	}
	ls, err := leasesWhereInfo(ctx, tx, info, where, args...)
	return ls, mapErr(op, r.path, err)
}

// leasesWhereInfo is leasesWhere over an already introspected schema.
func leasesWhereInfo(ctx context.Context, q queryer, info schemaInfo, where string,
	args ...any) ([]leaserec.Lease, error) {
	ls, h, err := readTable(ctx, q, info, "leases", leaseCols, where, args,
		decodeLease, func(v leaserec.Lease) []string { return v.Problems })
	if err != nil {
		return nil, err
	}
	if h.Status == leaserec.HealthUnavailable {
		return nil, &DBError{Op: "read lease", Err: errNoTable, Detail: joinReasons(h)}
	}
	if len(ls) == 0 {
		return nil, nil
	}
	if !info.hasTable("work_items") {
		return ls, nil
	}
	for i := range ls {
		var remote, org, repo, kind sql.NullString
		var num sql.NullInt64
		rows, qerr := q.QueryContext(ctx, `SELECT remote, org, repo, work_kind, work_number
			FROM work_items WHERE work_item_id = ?`, ls[i].WorkItemID)
		if qerr != nil {
			return nil, qerr
		}
		if rows.Next() {
			if serr := rows.Scan(&remote, &org, &repo, &kind, &num); serr != nil {
				rows.Close()
				return nil, serr
			}
			ls[i].Work = leaserec.WorkRef{Remote: remote.String, Org: org.String, Repo: repo.String,
				Kind: leaserec.WorkKind(kind.String), Number: num.Int64}
		}
		rows.Close()
	}
	return ls, nil
}

func joinReasons(h leaserec.Health) string {
	s := ""
	for i, r := range h.Reasons {
		if i > 0 {
			s += "; "
		}
		s += r
	}
	return s
}

// EventsBacklog reads what a reader catching up from cursor needs of the events past it,
// in id order: the last `last` events of any type, and every `claim.refused` event (the
// contention they record is counted over a window). The events in between are skipped —
// a long-lived DB holds every event since it was made, and a reader that only shows
// recent activity must not read them all into memory. next is the highest event id past
// cursor (cursor itself when there is none): the cursor to continue from.
func (r *reads) EventsBacklog(ctx context.Context, cursor int64, last int) (
	evs []leaserec.Event, h leaserec.Health, next int64, err error) {
	const op = "events"
	next = cursor
	dbtx, err := r.beginRead(ctx)
	if err != nil {
		return nil, leaserec.Health{}, next, mapErr(op, r.path, err)
	}
	defer dbtx.Rollback()
	tx := r.q(dbtx)
	info, err := r.introspect(ctx, tx, "events")
	if err != nil {
		return nil, leaserec.Health{}, next, mapErr(op, r.path, err)
	}
	where := "WHERE event_id > ? AND (event_id IN (SELECT event_id FROM events WHERE event_id > ? ORDER BY event_id " +
		"DESC LIMIT ?)"
	args := []any{cursor, cursor, max(last, 0)}
	if info.has("events", "event_type") {
		where += " OR event_type = 'claim.refused'"
	}
	evs, h, err = readTable(ctx, tx, info, "events", eventCols, where+") ORDER BY event_id", args,
		decodeEvent, func(v leaserec.Event) []string { return v.Problems })
	if err != nil || h.Status == leaserec.HealthUnavailable {
		return evs, h, next, mapErr(op, r.path, err)
	}
	rows, err := tx.QueryContext(ctx, "SELECT coalesce(max(event_id), ?) FROM events WHERE event_id > ?", cursor, cursor)
	if err != nil {
		return evs, h, next, mapErr(op, r.path, err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := rows.Scan(&next); err != nil {
			return evs, h, cursor, mapErr(op, r.path, err)
		}
	}
	return evs, h, next, mapErr(op, r.path, rows.Err())
}
