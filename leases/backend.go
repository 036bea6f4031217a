package leases

import (
	"context"
	"time"

	"steward/leases/leaserec"
)

// Target names a control-plane DB: the backend is chosen by its location.
type Target struct {
	// Loc is a SQLite file path (the embedded default) or a postgres:// (postgresql://)
	// URL. A URL never carries a password: it would show in argv, logs and the config
	// file's check output.
	Loc string
	// PasswordFile names a file holding the PostgreSQL password (its first line; the
	// file must not be readable by group or others). Without it the password comes from
	// PGPASSWORD or a PGPASSFILE/~/.pgpass file, as libpq's clients take it.
	PasswordFile string
}

// Postgres reports whether t names a PostgreSQL database.
func (t Target) Postgres() bool { return IsPostgresURL(t.Loc) }

// String is the location as it may be shown: a PostgreSQL URL with no password and
// no query parameters.
func (t Target) String() string {
	if t.Postgres() {
		return redactURL(t.Loc)
	}
	return t.Loc
}

// rows are the reads of a DB's current state. A missing table or column degrades
// the section it belongs to (Health), never reads as "nothing there".
type rows interface {
	// Snapshot reads every section in one read transaction.
	Snapshot(ctx context.Context, opt ReadOptions) (*Snapshot, error)
	// ReadScope reads the rows a batch of changes named, by indexed lookups.
	ReadScope(ctx context.Context, sc Scope) (*Scoped, error)
	// LeaseByID reads one lease; found is false when no row has that id.
	LeaseByID(ctx context.Context, id string) (l leaserec.Lease, found bool, err error)
	// LeasesForWorkItem reads the non-terminal leases on one item.
	LeasesForWorkItem(ctx context.Context, ref leaserec.WorkRef) ([]leaserec.Lease, error)
	// LeaseHistory reads every lease on one item, oldest first.
	LeaseHistory(ctx context.Context, ref leaserec.WorkRef) ([]leaserec.Lease, error)
}

// events are the reads of the control-plane events past a cursor.
type events interface {
	EventsSince(ctx context.Context, cursor int64, limit int) ([]leaserec.Event, leaserec.Health, error)
	EventsBacklog(ctx context.Context, cursor int64, last int) (
		evs []leaserec.Event, h leaserec.Health, next int64, err error)
}

// schema answers what the DB's schema allows, so a preview refuses as the apply would.
type schema interface {
	HasColumn(ctx context.Context, table, col string) (bool, error)
	Supports(ctx context.Context, op Op) (Verdict, error)
}

// versioned is how a watcher tells that another connection committed: a version that
// moves with every commit, the events read at it, and whether the location now names
// another database than the one opened.
type versioned interface {
	DataVersion(ctx context.Context) (int64, error)
	EventsAtVersion(ctx context.Context, cursor int64, limit int) (VersionedEvents, error)
	Replaced() bool
}

// Reader reads a control-plane DB read-only: it never creates, migrates or writes it.
// Implementations are safe for concurrent use.
type Reader interface {
	rows
	events
	schema
	versioned
	// Path is the DB's location as it may be shown.
	Path() string
	Close() error
}

// Clock is implemented by a Reader whose backend's transitions fence against the
// database's own clock (PostgreSQL): a preview judges expiry at that clock, as the
// apply will. A SQLite DB lives on one host, whose clock is the caller's.
type Clock interface {
	Clock(ctx context.Context) (time.Time, error)
}

var _ Clock = (*PGReader)(nil)

// Store runs the fenced transitions. Every transition is one transaction; refusals are
// Outcomes with a stable Code, identical on every backend. Implementations are safe for
// concurrent use.
type Store interface {
	Claim(ctx context.Context, req ClaimRequest, now time.Time) (Outcome, error)
	Heartbeat(ctx context.Context, f Fence, now time.Time) (Outcome, error)
	Release(ctx context.Context, f Fence, reason string, now time.Time) (Outcome, error)
	ReclaimExpired(ctx context.Context, f Fence, by string, now time.Time) (Outcome, error)
	Abandon(ctx context.Context, req AbandonRequest, now time.Time) (Outcome, error)
	ExpireSweep(ctx context.Context, now time.Time) (Outcome, error)
	// Policies is the lease policy set the Store applies.
	Policies() leaserec.PolicySet
	Close() error
}

var (
	_ Reader = (*SQLiteReader)(nil)
	_ Store  = (*SQLiteStore)(nil)
	_ Reader = (*PGReader)(nil)
	_ Store  = (*PGStore)(nil)
)

// OpenReader opens the DB t names for reading (OpenReadOnly for a SQLite file,
// OpenPGReader for a PostgreSQL URL).
func OpenReader(t Target) (Reader, error) {
	if t.Postgres() {
		r, err := OpenPGReader(context.Background(), t)
		if err != nil {
			return nil, err
		}
		return r, nil
	}
	r, err := OpenReadOnly(t.Loc)
	if err != nil {
		return nil, err // never a non-nil Reader holding a nil pointer
	}
	return r, nil
}

// OpenStore opens the DB t names for transitions (OpenReadWrite for a SQLite file,
// OpenPGStore for a PostgreSQL URL).
func OpenStore(t Target, opt StoreOptions) (Store, error) {
	if t.Postgres() {
		s, err := OpenPGStore(context.Background(), t, opt)
		if err != nil {
			return nil, err
		}
		return s, nil
	}
	s, err := OpenReadWrite(t.Loc, opt)
	if err != nil {
		return nil, err
	}
	return s, nil
}
