package leases

import (
	"strconv"
	"strings"
)

// dialect is what differs between the SQL of the two backends. Shared readers write
// their SQL with SQLite's ? placeholders; a PostgreSQL queryer (pgQueryer) numbers them.
type dialect struct{ pg bool }

var (
	sqliteSQL = dialect{}
	pgSQL     = dialect{pg: true}
)

// fold is Fold as an SQL expression over a column: ASCII white space trimmed, then
// lower-cased (every value compared against is ASCII). On SQLite it is exactly the
// expression of the index leases_item_active (migration 0003); on PostgreSQL exactly
// the one of steward's indexes (migrations/pg), so that they serve the lookups.
func (d dialect) fold(col string) string {
	if d.pg {
		return "lower(btrim(" + col + "::text, E'\\t\\n\\x0b\\f\\r '))"
	}
	return "lower(trim(" + col + ", char(9, 10, 11, 12, 13, 32)))"
}

// pgTimeFormat renders a timestamptz as steward's TimeLayout (UTC, microseconds, Z).
const pgTimeFormat = `'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'`

// selectExpr is how a reader selects a column of the given type so that it scans as
// the text the decoders read: as it is on SQLite; on PostgreSQL a timestamp is rendered
// in steward's layout (UTC, so fences compare the same text on every host), a naive one
// without a zone (read as UTC, as the seed reads naive values), integers and text as
// they are, anything else (json, boolean, numeric) as its text.
func (d dialect) selectExpr(col, typ string) string {
	if !d.pg {
		return col
	}
	return d.textOf(col, typ) + " AS " + col
}

// textOf is the text expression of a column (see selectExpr); on SQLite the column.
func (d dialect) textOf(col, typ string) string {
	if !d.pg {
		return col
	}
	switch strings.ToLower(typ) {
	case "timestamp with time zone":
		return "to_char(" + col + " AT TIME ZONE 'UTC', " + pgTimeFormat + ")"
	case "timestamp without time zone":
		return "to_char(" + col + `, 'YYYY-MM-DD"T"HH24:MI:SS.US')`
	case "text", "bigint", "integer", "smallint":
		return col
	}
	if strings.HasPrefix(strings.ToLower(typ), "character") {
		return col
	}
	return "CAST(" + col + " AS text)"
}

// bind numbers the ? placeholders of q for PostgreSQL ($1, $2, ...). The SQL steward
// writes holds no ? inside a string literal or an identifier; a quoted ? is kept.
func (d dialect) bind(q string) string {
	if !d.pg || !strings.Contains(q, "?") {
		return q
	}
	var b strings.Builder
	b.Grow(len(q) + 8)
	n, quote := 0, byte(0)
	for i := 0; i < len(q); i++ {
		c := q[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '?':
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// createdAt names, per table, the column recording when a row was created: the order
// rows were made in, on PostgreSQL (which has no rowid).
var createdAt = map[string]string{"leases": "created_at", "sessions": "started_at"}

// createdOrder is an ORDER BY list putting table's rows in the order they were created
// (dir "" or " DESC"): SQLite's rowid; on PostgreSQL the table's creation time when it
// has one, then its key.
func (i schemaInfo) createdOrder(table, key, dir string) string {
	if !i.pg {
		return "rowid" + dir
	}
	if c := createdAt[table]; c != "" && i.has(table, c) {
		return c + dir + ", " + key + dir
	}
	return key + dir
}

// jsonTextArray selects the strings of a JSON array parameter as rows.
func (d dialect) jsonTextArray(param string) string {
	if d.pg {
		return "SELECT json_array_elements_text(CAST(" + param + " AS json))"
	}
	return "SELECT value FROM json_each(" + param + ")"
}

func quote(s string) string { return "\"" + s + "\"" }
