package leases

import (
	"context"
	"database/sql"
	"sort"
	"strings"
	"time"
)

// Op names a transition, for the schema it needs (Supports).
type Op string

// The transitions.
const (
	OpClaim     Op = "claim"
	OpHeartbeat Op = "heartbeat"
	OpRelease   Op = "release"
	OpReclaim   Op = "reclaim"
	OpAbandon   Op = "abandon"
	OpSweep     Op = "expire sweep"
)

// opNeeds lists, per transition, the columns it cannot do without: without them the
// transition could not be done safely (a lease with no expiry would never end; an item
// with no natural key could not be found again), so it is refused with
// CodeSchemaUnsupported — by the preview (Reader.Supports) and by the apply alike. Every
// other column is written when the table has it and left out when it does not: a DB
// steward did not create keeps its schema, and gets the rows its own workers would write.
var opNeeds = map[Op]map[string][]string{
	OpClaim: {
		"work_items": {"work_item_id", "remote", "org", "repo", "work_kind", "work_number"},
		"leases":     {"lease_id", "status", "work_item_id", "session_id", "expires_at"},
		"sessions":   {"session_id"},
	},
	OpHeartbeat: {"leases": {"lease_id", "status", "session_id", "expires_at"}},
	OpRelease:   {"leases": {"lease_id", "status", "session_id"}},
	OpReclaim:   {"leases": {"lease_id", "status", "session_id", "expires_at"}},
	OpAbandon:   {"leases": {"lease_id", "status", "session_id"}},
	OpSweep:     {"leases": {"lease_id", "status", "expires_at"}},
}

// missingFor names the columns op needs that info lacks ("leases.expires_at"), sorted.
func missingFor(info schemaInfo, op Op) []string {
	var out []string
	for t, cs := range opNeeds[op] {
		for _, c := range cs {
			if !info.has(t, c) {
				out = append(out, t+"."+c)
			}
		}
	}
	sort.Strings(out)
	return out
}

// schemaVerdict is the guard every transition runs first (and every preview through
// Reader.Supports): the columns it needs exist.
func schemaVerdict(info schemaInfo, op Op) Verdict {
	miss := missingFor(info, op)
	if len(miss) == 0 {
		return allowed
	}
	return refuse(CodeSchemaUnsupported, "the control-plane DB has no "+strings.Join(miss, ", ")+
		", which a "+string(op)+" cannot be done safely without; steward never adds columns to a DB it did not create. "+
		"Let the supervised system do it, or migrate the DB with its own tools")
}

// Supports reports whether the DB's schema lets op be done: the same guard the
// transition runs first, so a preview refuses exactly as the apply would.
func (r *reads) Supports(ctx context.Context, op Op) (Verdict, error) {
	info, err := r.introspect(ctx, r.q(r.db))
	if err != nil {
		return Verdict{}, mapErr("schema", r.path, err)
	}
	return schemaVerdict(info, op), nil
}

// SeedTimeLayout is how steward writes timestamps into a DB it did not create: the
// seed's datetime.now(timezone.utc).isoformat() form (an explicit +00:00 offset), with a
// fixed microsecond fraction so text order is time order among steward's own writes.
const SeedTimeLayout = "2006-01-02T15:04:05.000000+00:00"

// colVal is one column a transition writes: a value, or an SQL expression over the row.
type colVal struct {
	col  string
	val  any
	expr string // when set, written as col = expr (val unused)
}

func set(col string, val any) colVal              { return colVal{col: col, val: val} }
func setExpr(col, expr string) colVal             { return colVal{col: col, expr: expr} }
func (s *SQLiteStore) has(table, col string) bool { return s.info.has(table, col) }

// present keeps the values whose column table has.
func (s *SQLiteStore) present(table string, vals []colVal) []colVal {
	out := vals[:0:0]
	for _, v := range vals {
		if s.has(table, v.col) {
			out = append(out, v)
		}
	}
	return out
}

// insert writes one row of the columns table has; returning, when set, names a column
// read back (RETURNING) into dst.
func (s *SQLiteStore) insert(ctx context.Context, tx *sql.Tx, table string, vals []colVal, returning string, dst any) error {
	vals = s.present(table, vals)
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
	q := "INSERT INTO " + table + "(" + strings.Join(cols, ", ") + ") VALUES(" + strings.Join(marks, ", ") + ")"
	if returning == "" {
		_, err := tx.ExecContext(ctx, q, args...)
		return err
	}
	return tx.QueryRowContext(ctx, q+" RETURNING "+returning, args...).Scan(dst)
}

// update sets the columns table has on the rows where matches, and returns how many
// rows it changed (0 when table has none of the columns).
func (s *SQLiteStore) update(ctx context.Context, tx *sql.Tx, table string, vals []colVal, where string, args ...any) (int64, error) {
	vals = s.present(table, vals)
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
	res, err := tx.ExecContext(ctx, "UPDATE "+table+" SET "+strings.Join(sets, ", ")+" "+where, append(all, args...)...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// ts renders t the way this DB's timestamps are written: steward's layout on a DB it
// created, the seed's isoformat on any other.
func (s *SQLiteStore) ts(t time.Time) string {
	if s.steward {
		return FormatTime(t)
	}
	return t.UTC().Format(SeedTimeLayout)
}

// eventsNameSessions reports whether the events table can name the sessions of an event
// (steward's session_id and detail_json columns): a refused claim is worth recording only
// where it can say who asked and who holds the item.
func (s *SQLiteStore) eventsNameSessions() bool {
	return s.has("events", "session_id") && s.has("events", "detail_json")
}
