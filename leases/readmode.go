package leases

import (
	"context"
	"errors"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// How a reader opens a SQLite DB so that it never creates or changes a file.
//
// SQLite's read-only mode alone (mode=ro) is not enough. A reader of a WAL-mode DB needs
// the WAL index: on a DB closed cleanly (no -wal, no -shm) it creates both, owned by
// whoever reads and with the DB's permission bits, so a viewer's read as another account
// leaves files the workers cannot write and their next transaction fails with "attempt
// to write a readonly database". A reader attached to an existing -shm writes its read
// marks there. A reader therefore looks at what is beside the DB first and opens it the
// one way that creates and writes nothing:
//
//	rollback journal                   mode=ro: SQLite's own shared locks, no WAL files
//	WAL, -wal and -shm present         mode=ro&readonly_shm=1: the -shm read-only, so a
//	                                   read mark is never written (in a process that
//	                                   declared OnlyOwnWriters; else mode=ro)
//	WAL, no -wal (closed cleanly)      immutable=1, under a read lock on SQLite's shared
//	                                   lock bytes held for as long as the handle is open;
//	                                   a -shm left without a -wal is stale (SQLite makes
//	                                   the -wal first) and ignored while it stays as seen
//	WAL, -wal but no -shm              the -wal holds no frame SQLite would replay (no
//	                                   valid header, or a first frame that does not check
//	                                   out): as closed cleanly, the -wal ignored as SQLite
//	                                   ignores it; else refused (ErrWALIndexMissing):
//	                                   SQLite would have to create the -shm to read it
//	no SQLite header (empty, foreign)  immutable=1: SQLite says what the file is
//
// Why the held lock makes an immutable read of a quiescent WAL DB exact: every
// connection to a WAL DB holds a shared lock on the DB file while it is open, and
// removing the -wal (the last connection checkpointing as it closes) or leaving WAL mode
// needs the exclusive lock. While the reader holds its shared lock, then, a writer that
// comes opens a -wal that stays, and the main file changes only by a checkpoint of that
// -wal. A -wal absent before and after a read means no writer touched the file during it;
// a -wal present sends the reader to the readonly_shm handle. The lock is Linux's
// open-file-description lock (fcntl F_OFD_SETLK): it conflicts with SQLite's locks in
// every process, this one included, and closing another descriptor never drops it.
//
// The lock bytes are SQLite's (os_unix.c): a read lock on the shared range is what a
// reader holds; a writer needs a write lock on it.
const (
	pendingByte = 0x40000000
	sharedFirst = pendingByte + 2
	sharedSize  = 510
)

// errLockBusy is readLock's answer when a writer holds the shared range.
var errLockBusy = errors.New("a writer holds the DB's lock")

// readKind is how a SQLiteReader's handle reads the file.
type readKind int

const (
	kindForeign   readKind = iota + 1 // no SQLite header: immutable=1, SQLite says what it is
	kindRollback                      // rollback journal: mode=ro
	kindShared                        // WAL with -wal and -shm: mode=ro&readonly_shm=1
	kindQuiescent                     // WAL without -wal: immutable=1 under the held read lock
	kindNoIndex                       // WAL with -wal and no -shm: refused
	kindWAL                           // the header's verdict before the companions are looked at
)

// String names a kind as the documentation does.
func (k readKind) String() string {
	switch k {
	case kindForeign:
		return "not a SQLite header"
	case kindRollback:
		return "rollback journal"
	case kindShared:
		return "WAL, shared with its writers"
	case kindQuiescent:
		return "WAL, closed cleanly"
	case kindNoIndex:
		return "WAL without its -shm"
	}
	return "WAL"
}

// dsnOpts returns the connection settings of a handle of this kind; roSHM says the -shm
// may be mapped read-only (no writer of this process has the file open).
func (k readKind) dsnOpts(roSHM bool) dsnOpts {
	switch k {
	case kindForeign, kindQuiescent:
		return dsnOpts{immutable: true}
	case kindShared:
		return dsnOpts{readonlySHM: roSHM}
	}
	return dsnOpts{}
}

// headerKind reads the journal mode from the first 100 bytes of a DB file: bytes 18 and
// 19 (the file format's write and read versions) are 1 for a rollback journal and 2 for
// WAL.
func headerKind(h []byte) readKind {
	if len(h) < 100 || string(h[:16]) != "SQLite format 3\x00" {
		return kindForeign
	}
	switch {
	case h[18] == 1 && h[19] == 1:
		return kindRollback
	case h[18] == 2 && h[19] == 2:
		return kindWAL
	}
	return kindForeign
}

// dbFile is this process's one descriptor of a DB file (by device and inode), opened
// read-only to read its header and to hold the read lock. It is never closed: closing
// any descriptor of a file drops every process-associated lock this process holds on it
// — SQLite's, a writer's in this very process among them.
type dbFile struct {
	f     *os.File
	id    fileID
	mu    sync.Mutex
	holds int // handles holding the read lock through f

	// reg guards what this process has open on the file besides: SQLite keeps one WAL
	// index mapping per file and process, made read-only or read-write by whichever
	// connection maps it first, and a writer cannot write through a read-only one. So a
	// reader maps the -shm read-only only while no writer of this process has the file
	// open, and a writer that opens first has those readers drop their handles.
	reg     sync.Mutex
	writers int
	roSHM   map[*SQLiteReader]struct{}
}

var dbFiles = struct {
	sync.Mutex
	byID map[fileID]*dbFile
	// spare keeps open the descriptors a race opened twice for one file (see dbFile).
	spare []*os.File
}{byID: map[fileID]*dbFile{}}

// fileFor returns the process's descriptor of the file at path, opening it once.
func fileFor(path string) (*dbFile, error) {
	if id := fileIDOf(path); id.ok {
		dbFiles.Lock()
		d := dbFiles.byID[id]
		dbFiles.Unlock()
		if d != nil {
			return d, nil
		}
	}
	// O_NONBLOCK: a FIFO renamed there since the caller's check must not block the open.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		dbFiles.Lock()
		dbFiles.spare = append(dbFiles.spare, f)
		dbFiles.Unlock()
		return nil, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !fi.Mode().IsRegular() || !ok {
		f.Close() // no DB SQLite could hold locks on
		return nil, errNotRegular
	}
	id := fileID{dev: uint64(st.Dev), ino: uint64(st.Ino), ok: true}
	dbFiles.Lock()
	defer dbFiles.Unlock()
	if d := dbFiles.byID[id]; d != nil {
		dbFiles.spare = append(dbFiles.spare, f)
		return d, nil
	}
	d := &dbFile{f: f, id: id}
	dbFiles.byID[id] = d
	return d, nil
}

var errNotRegular = errors.New("not a regular file")

// kind reads the header's verdict through the descriptor.
func (d *dbFile) kind() (readKind, error) {
	var h [100]byte
	n, err := d.f.ReadAt(h[:], 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return 0, err
	}
	return headerKind(h[:n]), nil
}

// sig is the file's size and modification time: where no read lock can be held, what
// shows a quiescent file changed between two reads.
func (d *dbFile) sig() fileSig {
	fi, err := d.f.Stat()
	if err != nil {
		return fileSig{}
	}
	return fileSig{size: fi.Size(), mtime: fi.ModTime().UnixNano(), ok: true}
}

type fileSig struct {
	size, mtime int64
	ok          bool
}

// hold takes the read lock through d (or shares it with another handle of this process
// holding it) until release. It waits up to busy for a writer holding the range (the
// last connection checkpointing as it closes).
func (d *dbFile) hold(ctx context.Context, busy time.Duration) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.holds > 0 {
		d.holds++
		return nil
	}
	deadline := time.Now().Add(busy)
	wait := time.Millisecond
	for {
		err := readLock(d.f)
		if err == nil {
			d.holds = 1
			return nil
		}
		if !errors.Is(err, errLockBusy) || !time.Now().Before(deadline) {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		wait = min(2*wait, 50*time.Millisecond)
	}
}

// release gives back one hold; the last releases the lock (the descriptor stays open).
func (d *dbFile) release() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.holds == 0 {
		return
	}
	if d.holds--; d.holds == 0 {
		_ = readUnlock(d.f)
	}
}

// writerOpening registers a writer of this process on the file at path before it opens
// it: every reader of this process whose handle maps the -shm read-only drops it (the
// next read reopens through the writer's mapping). Call the returned function when the
// writer has closed. A file that cannot be opened has no reader to tell.
func writerOpening(path string) (done func()) {
	d, err := fileFor(path)
	if err != nil {
		return func() {}
	}
	d.reg.Lock()
	d.writers++
	readers := make([]*SQLiteReader, 0, len(d.roSHM))
	for r := range d.roSHM {
		readers = append(readers, r)
	}
	d.reg.Unlock()
	for _, r := range readers {
		r.dropReadOnlySHM()
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			d.reg.Lock()
			d.writers--
			d.reg.Unlock()
		})
	}
}

// onlyOwnWriters is set by OnlyOwnWriters.
var onlyOwnWriters atomic.Bool

// OnlyOwnWriters declares that every connection of this process that writes a SQLite DB
// is opened through this package (OpenReadWrite, OpenStore, Migrate), which tells the
// process's readers first. Only then do readers map a WAL DB's -shm read-only — never
// writing a read mark into it — because SQLite keeps one mapping per file and process and
// a writer cannot write through a read-only one; without it a reader beside live writers
// maps the -shm as SQLite's mode=ro does (it may write its read mark there; it still
// creates nothing). The steward binary declares it as it starts; a program that writes
// the DB through connections of its own (test fixtures, the benchmark harness) does not.
func OnlyOwnWriters() { onlyOwnWriters.Store(true) }

// mapReadOnly registers r as mapping d's -shm read-only, unless a writer of this process
// has the file open or may open it unannounced; it reports whether r may.
func (d *dbFile) mapReadOnly(r *SQLiteReader) bool {
	d.reg.Lock()
	defer d.reg.Unlock()
	if d.writers > 0 || !onlyOwnWriters.Load() {
		return false
	}
	if d.roSHM == nil {
		d.roSHM = map[*SQLiteReader]struct{}{}
	}
	d.roSHM[r] = struct{}{}
	return true
}

func (d *dbFile) unmapReadOnly(r *SQLiteReader) {
	d.reg.Lock()
	delete(d.roSHM, r)
	d.reg.Unlock()
}

// fileState is what a reader sees at and beside the DB before it opens a handle.
type fileState struct {
	d    *dbFile
	kind readKind
	sig  fileSig
	// wal is the -wal's size and mtime, zero when absent (kindQuiescent): a quiescent
	// file stays so while it is unchanged and no -shm appears.
	wal fileSig
	// shm is the -shm's size and mtime when one was there without a -wal (kindQuiescent:
	// a connection opens the -wal before the -shm, so none has this file open; a -wal
	// deleted by hand, or a copy of the DB and its -shm without the -wal, leaves it), zero
	// when absent. The read goes on taking the file as quiescent while that -shm stays as
	// it was.
	shm fileSig
}

// observe looks at the DB at path and its companions. It creates and opens nothing but
// the process's descriptor of the DB.
func observe(path string) (fileState, error) {
	d, err := fileFor(path)
	if err != nil {
		return fileState{}, err
	}
	k, err := d.kind()
	if err != nil {
		return fileState{}, err
	}
	st := fileState{d: d, kind: k, sig: d.sig()}
	if k == kindWAL {
		wal, err := present(path + "-wal")
		if err != nil {
			return fileState{}, err
		}
		shm, err := sigOf(path + "-shm")
		if err != nil {
			return fileState{}, err
		}
		switch {
		case !wal:
			st.kind, st.shm = kindQuiescent, shm
		case shm.ok:
			st.kind = kindShared
		default:
			frames, sig, err := walFrames(path + "-wal")
			if err != nil {
				return fileState{}, err
			}
			st.kind, st.wal = kindQuiescent, sig
			if frames {
				st.kind = kindNoIndex
			}
		}
	}
	return st, nil
}

// quiescentNow reports whether the companions of a file observed quiescent are as they
// were: the -shm absent still (or the stale one seen then, unchanged), and the -wal absent
// still or unchanged.
func quiescentNow(path string, wal, shm fileSig) bool {
	if now, err := sigOf(path + "-shm"); err != nil || now != shm {
		return false
	}
	fi, err := os.Lstat(path + "-wal")
	if errors.Is(err, os.ErrNotExist) {
		return !wal.ok
	}
	return err == nil && wal.ok && fi.Size() == wal.size && fi.ModTime().UnixNano() == wal.mtime
}

// walFrames reports whether a -wal holds a frame SQLite would replay when it rebuilds the
// WAL index: a valid header (magic, version, page size, checksum) and a first frame whose
// salts match it and whose checksum checks out (file format, "WAL file format"). A -wal
// without one is ignored by SQLite, which then reads the main file alone. It also returns
// the -wal's size and mtime.
func walFrames(path string) (bool, fileSig, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, fileSig{}, err
	}
	defer f.Close() // SQLite holds no lock on a -wal: closing this drops none
	fi, err := f.Stat()
	if err != nil {
		return false, fileSig{}, err
	}
	sig := fileSig{size: fi.Size(), mtime: fi.ModTime().UnixNano(), ok: true}
	var h [32]byte
	if _, err := f.ReadAt(h[:], 0); err != nil {
		return false, sig, nil // shorter than a header: nothing to replay
	}
	magic := be32(h[0:])
	if magic&^1 != 0x377f0682 || be32(h[4:]) != 3007000 {
		return false, sig, nil
	}
	native := magic&1 == 1 // checksums over big-endian words; else little-endian
	page := int64(be32(h[8:]))
	if page == 1 {
		page = 65536
	}
	if page < 512 || page > 65536 || page&(page-1) != 0 {
		return false, sig, nil
	}
	s1, s2 := walChecksum(h[:24], native, 0, 0)
	if s1 != be32(h[24:]) || s2 != be32(h[28:]) {
		return false, sig, nil
	}
	frame := make([]byte, 24+page)
	if _, err := f.ReadAt(frame, 32); err != nil {
		return false, sig, nil // no complete first frame
	}
	if be32(frame[0:]) == 0 || be32(frame[8:]) != be32(h[16:]) || be32(frame[12:]) != be32(h[20:]) {
		return false, sig, nil
	}
	s1, s2 = walChecksum(frame[:8], native, s1, s2)
	s1, s2 = walChecksum(frame[24:], native, s1, s2)
	return s1 == be32(frame[16:]) && s2 == be32(frame[20:]), sig, nil
}

func be32(b []byte) uint32 {
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}

// walChecksum is SQLite's WAL checksum over b (a multiple of 8 bytes), continuing s1, s2:
// the words read big-endian when bigEndian, else little-endian.
func walChecksum(b []byte, bigEndian bool, s1, s2 uint32) (uint32, uint32) {
	word := func(p []byte) uint32 {
		if bigEndian {
			return be32(p)
		}
		return uint32(p[3])<<24 | uint32(p[2])<<16 | uint32(p[1])<<8 | uint32(p[0])
	}
	for i := 0; i+8 <= len(b); i += 8 {
		s1 += word(b[i:]) + s2
		s2 += word(b[i+4:]) + s1
	}
	return s1, s2
}

// sigOf is the size and mtime of the file at path (lstat: a link counts as there), zero
// when there is none.
func sigOf(path string) (fileSig, error) {
	fi, err := os.Lstat(path)
	switch {
	case err == nil:
		return fileSig{size: fi.Size(), mtime: fi.ModTime().UnixNano(), ok: true}, nil
	case errors.Is(err, os.ErrNotExist):
		return fileSig{}, nil
	}
	return fileSig{}, err
}

// present reports whether a companion file exists (lstat: a link counts as there).
func present(path string) (bool, error) {
	_, err := os.Lstat(path)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, os.ErrNotExist):
		return false, nil
	}
	return false, err
}
