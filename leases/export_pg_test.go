package leases

import "context"

// PGReaderReadOnly reports whether r's sessions default to read-only transactions.
func PGReaderReadOnly(r *PGReader) bool {
	var s string
	if err := r.db.QueryRowContext(context.Background(), `SHOW default_transaction_read_only`).Scan(&s); err != nil {
		return false
	}
	return s == "on"
}
