package leases

import (
	"context"
	"errors"
	"fmt"
	"os"

	"steward/leases/leaserec"
)

// ErrWALIndexMissing is returned by OpenReadOnly and by reads when the DB is in WAL mode
// and its -wal file has no -shm beside it: SQLite cannot read the -wal without a WAL
// index, and would create the -shm to build one. A read never creates a file, so the DB
// is unreadable until a writer (the DB's owner) opens it again, which rebuilds the -shm.
var ErrWALIndexMissing = errors.New(
	"WAL-mode DB has a -wal file but no -shm beside it: reading it would create the -shm, and a read creates nothing",
)

// maxReopens bounds how often one read reopens its handle because the file changed kind
// under it (a writer came or went); past it the read reports the DB busy.
const maxReopens = 3

// do runs read on a handle that still fits the file: it reopens the handle first when
// the file changed kind or identity since it was opened, and runs read again when the
// file changed during a read that took it as quiescent (a -wal appeared: a writer came).
func (r *SQLiteReader) do(ctx context.Context, op string, read func() error) error {
	for n := 0; ; n++ {
		r.mu.RLock()
		if r.closed {
			r.mu.RUnlock()
			return &DBError{Op: op, Path: r.path, Err: errReaderClosed}
		}
		if r.db != nil && r.fits() {
			err := read()
			still := r.fits()
			r.mu.RUnlock()
			if still {
				return err
			}
		} else {
			r.mu.RUnlock()
		}
		if n == maxReopens {
			return &DBError{
				Op:     op,
				Path:   r.path,
				Err:    ErrBusy,
				Detail: "the DB's journal files kept changing under the read; try again",
			}
		}
		if err := r.reopenIfStale(ctx, op); err != nil {
			return err
		}
	}
}

var errReaderClosed = errors.New("reader is closed")

// fits reports whether the open handle still reads the file the path names the way its
// kind requires. The caller holds r.mu.
func (r *SQLiteReader) fits() bool {
	if fileIDOf(r.path) != r.id {
		return false
	}
	switch r.kind {
	case kindQuiescent:
		return quiescentNow(r.path, r.wal, r.shm) && (r.held || r.file.sig() == r.sig)
	case kindRollback, kindForeign:
		k, err := r.file.kind()
		return err == nil && k == r.kind
	}
	return true // kindShared: the pinned connection's own lock keeps the -wal there
}

func (r *SQLiteReader) reopenIfStale(ctx context.Context, op string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return &DBError{Op: op, Path: r.path, Err: errReaderClosed}
	}
	if r.db != nil && r.fits() {
		return nil // another read reopened it meanwhile
	}
	return r.reopen(ctx, op)
}

// reopen drops the handle and opens one that fits the file as it is now. The caller
// holds r.mu (or is OpenReadOnly).
func (r *SQLiteReader) reopen(ctx context.Context, op string) error {
	r.drop()
	for n := 0; n <= maxReopens; n++ {
		st, err := observe(r.path)
		if err != nil {
			return observeErr(op, r.path, err)
		}
		switch st.kind {
		case kindNoIndex:
			return &DBError{Op: op, Path: r.path, Err: ErrWALIndexMissing}
		case kindQuiescent, kindShared:
			if ofdSupported {
				if err := st.d.hold(ctx, busyTimeout); err != nil {
					if errors.Is(err, errLockBusy) {
						return &DBError{Op: op, Path: r.path, Err: ErrBusy, Detail: "a writer held the DB's lock past the busy timeout"}
					}
					return &DBError{Op: op, Path: r.path, Err: err}
				}
				// Under the lock no writer can remove the -wal or change the journal mode:
				// look again, and open only what was seen under it.
				again, err := observe(r.path)
				if err != nil || again.d != st.d || again.kind != st.kind || again.wal != st.wal || again.shm != st.shm {
					st.d.release()
					if err != nil {
						return observeErr(op, r.path, err)
					}
					continue
				}
				r.held = true
			}
		}
		r.file, r.kind, r.id, r.sig, r.wal, r.shm = st.d, st.kind, st.d.id, st.sig, st.wal, st.shm
		if st.kind == kindShared {
			r.roSHM = st.d.mapReadOnly(r)
		}
		if err := r.connect(ctx, op, st.kind.dsnOpts(r.roSHM)); err != nil {
			r.drop()
			return err
		}
		if fileIDOf(r.path) != r.id { // renamed over between the look and the open
			r.drop()
			continue
		}
		if r.kind == kindShared && r.held {
			// The pinned connection has read: it holds SQLite's own shared lock for as
			// long as it is open, which keeps the -wal there as the read lock did.
			r.file.release()
			r.held = false
		}
		r.epoch++
		return nil
	}
	return &DBError{
		Op:     op,
		Path:   r.path,
		Err:    ErrBusy,
		Detail: "the DB's journal files kept changing while it was opened; try again",
	}
}

// connect opens the handle's pool and pinned connection, and reads once on the pin.
func (r *SQLiteReader) connect(ctx context.Context, op string, o dsnOpts) error {
	db, err := open(ctx, op, r.path, "ro", o, busyTimeout)
	if err != nil {
		return err
	}
	pin, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		return mapErr(op, r.path, err)
	}
	var n int
	if err := pin.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master").Scan(&n); err != nil {
		pin.Close()
		db.Close()
		return mapErr(op, r.path, err)
	}
	r.db, r.pin = db, pin
	return nil
}

// drop closes the handle and gives back its read lock. The caller holds r.mu.
func (r *SQLiteReader) drop() error {
	var err error
	if r.pin != nil {
		r.pin.Close()
	}
	if r.db != nil {
		err = r.db.Close()
	}
	if r.held {
		r.file.release()
	}
	if r.roSHM {
		r.file.unmapReadOnly(r)
	}
	r.db, r.pin, r.held, r.roSHM = nil, nil, false, false
	return err
}

// dropReadOnlySHM drops the handle when it maps the -shm read-only: a writer of this
// process is about to open the file (writerOpening). The next read reopens.
func (r *SQLiteReader) dropReadOnlySHM() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.roSHM {
		r.drop()
	}
}

// observeErr maps a failure to look at the DB file to the package's errors.
func observeErr(op, path string, err error) error {
	switch {
	case errors.Is(err, os.ErrNotExist):
		return &DBError{Op: op, Path: path, Err: ErrNoDB}
	case errors.Is(err, errNotRegular):
		return &DBError{Op: op, Path: path, Err: ErrNotSQLite, Detail: "not a regular file"}
	}
	return &DBError{Op: op, Path: path, Err: err}
}

// The reads, each through do: the handle fits the file before and after.

// Snapshot implements rows (see reads.Snapshot).
func (r *SQLiteReader) Snapshot(ctx context.Context, opt ReadOptions) (*Snapshot, error) {
	var s *Snapshot
	err := r.do(ctx, "snapshot", func() (err error) { s, err = r.reads.Snapshot(ctx, opt); return err })
	return s, err
}

// ReadScope implements rows (see reads.ReadScope).
func (r *SQLiteReader) ReadScope(ctx context.Context, sc Scope) (*Scoped, error) {
	var s *Scoped
	err := r.do(ctx, "scope", func() (err error) { s, err = r.reads.ReadScope(ctx, sc); return err })
	return s, err
}

// LeaseByID implements rows.
func (r *SQLiteReader) LeaseByID(ctx context.Context, id string) (l leaserec.Lease, found bool, err error) {
	err = r.do(ctx, "lease", func() (err error) { l, found, err = r.reads.LeaseByID(ctx, id); return err })
	return l, found, err
}

// LeasesForWorkItem implements rows.
func (r *SQLiteReader) LeasesForWorkItem(ctx context.Context, ref leaserec.WorkRef) ([]leaserec.Lease, error) {
	var ls []leaserec.Lease
	err := r.do(ctx, "leases", func() (err error) { ls, err = r.reads.LeasesForWorkItem(ctx, ref); return err })
	return ls, err
}

// LeaseHistory implements rows.
func (r *SQLiteReader) LeaseHistory(ctx context.Context, ref leaserec.WorkRef) ([]leaserec.Lease, error) {
	var ls []leaserec.Lease
	err := r.do(ctx, "lease history", func() (err error) { ls, err = r.reads.LeaseHistory(ctx, ref); return err })
	return ls, err
}

// EventsSince implements events.
func (r *SQLiteReader) EventsSince(ctx context.Context, cursor int64, limit int) (
	evs []leaserec.Event, h leaserec.Health, err error) {
	err = r.do(ctx, "events", func() (err error) { evs, h, err = r.reads.EventsSince(ctx, cursor, limit); return err })
	return evs, h, err
}

// EventsBacklog implements events.
func (r *SQLiteReader) EventsBacklog(ctx context.Context, cursor int64, last int) (
	evs []leaserec.Event, h leaserec.Health, next int64, err error) {
	err = r.do(
		ctx,
		"events",
		func() (err error) { evs, h, next, err = r.reads.EventsBacklog(ctx, cursor, last); return err },
	)
	return evs, h, next, err
}

// HasColumn implements schema.
func (r *SQLiteReader) HasColumn(ctx context.Context, table, col string) (ok bool, err error) {
	err = r.do(ctx, "schema", func() (err error) { ok, err = r.reads.HasColumn(ctx, table, col); return err })
	return ok, err
}

// Supports implements schema.
func (r *SQLiteReader) Supports(ctx context.Context, op Op) (v Verdict, err error) {
	err = r.do(ctx, "schema", func() (err error) { v, err = r.reads.Supports(ctx, op); return err })
	return v, err
}

// Kind says how the Reader reads the file now, as the documentation names it (for
// findings and tests).
func (r *SQLiteReader) Kind() string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.kind.String()
}

var _ fmt.Stringer = readKind(0)
