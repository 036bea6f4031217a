package leases

import (
	"context"
	"sort"
	"strings"
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

func set(col string, val any) colVal  { return colVal{col: col, val: val} }
func setExpr(col, expr string) colVal { return colVal{col: col, expr: expr} }
