package locks

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"steward/locks/lockrec"
)

// The write primitives below are called by package govern only. Each holds
// an exclusive flock on a sidecar file ".<name>.flock" for the whole
// read-compare-write, so steward processes serialise on a lock name; the
// sidecars are never removed (removing one would race with a waiter).

// Expect is the fence a write checks against the current lock file: either
// the file must not exist (Absent), or it must hold exactly Generation as
// lock_generation (0 when the key is absent) and TaskSessionID as
// work_lease.task_session_id.
type Expect struct {
	Absent        bool
	Generation    int64
	TaskSessionID string
}

// ExpectAbsent is the fence "no lock file by that name exists".
func ExpectAbsent() Expect { return Expect{Absent: true} }

// ExpectFence is the fence "the lock holds this generation and task session".
func ExpectFence(generation int64, taskSessionID string) Expect {
	return Expect{Generation: generation, TaskSessionID: taskSessionID}
}

// FenceOf returns the fence that matches rec as it is now.
func FenceOf(rec *lockrec.Record) Expect { return ExpectFence(rec.Generation(), rec.TaskSessionID()) }

// Step names passed to Writer.Step, in the order they happen.
const (
	StepLocked      = "locked"       // flock held, nothing written yet
	StepTempWritten = "temp-written" // temp file written, not yet synced
	StepTempSynced  = "temp-synced"  // temp file fsync'd
	StepRenamed     = "renamed"      // temp renamed over the target (the commit)
	StepDirSynced   = "dir-synced"   // directory fsync'd
	StepLiveRemoved = "live-removed" // Archive: live file removed
)

// Writer carries the options of the write primitives. The zero Writer is
// ready to use.
type Writer struct {
	// Step, when set, is called after each step named by the Step*
	// constants (crash tests kill the process there).
	Step func(step string)
	// Now returns the time stamped into archive names and recovery blocks;
	// nil means time.Now.
	Now func() time.Time
}

func (w *Writer) step(s string) {
	if w != nil && w.Step != nil {
		w.Step(s)
	}
}

func (w *Writer) now() time.Time {
	if w != nil && w.Now != nil {
		return w.Now().UTC()
	}
	return time.Now().UTC()
}

// WriteCAS writes rec to dir/name with the zero Writer; see Writer.WriteCAS.
func WriteCAS(dir, name string, expect Expect, rec lockrec.Record) (int64, error) {
	return (&Writer{}).WriteCAS(dir, name, expect, rec)
}

// WriteCAS compares the current dir/name against expect and, only if it
// matches, writes rec with lock_generation advanced by one past the current
// file's (1 for a new file) and returns that generation. The write is a temp
// file in dir, fsync, rename over name, directory fsync: a crash leaves the
// old or the new complete file, never a partial one. rec's Extra (unknown
// fields) is written back. Refusals: ErrExists, ErrNotFound, ErrFenceMoved,
// ErrInvalidName, ErrNotRegular, ErrUnreadable, each in a *PathError.
func (w *Writer) WriteCAS(dir, name string, expect Expect, rec lockrec.Record) (int64, error) {
	return w.writeCAS(dir, name, expect, rec, 1, nil)
}

// WriteCASChecked is WriteCAS with check run under the flock, after the fence matched
// and before anything is written: a non-nil error from check refuses the write with that
// error. A claim uses it to look again for a live lock of the item under another name.
func (w *Writer) WriteCASChecked(
	dir, name string,
	expect Expect,
	rec lockrec.Record,
	check func() error,
) (int64, error) {
	return w.writeCAS(dir, name, expect, rec, 1, check)
}

// writeCAS is WriteCAS with a floor for the new generation and an extra
// check run under the flock before the fence.
func (w *Writer) writeCAS(
	dir, name string,
	expect Expect,
	rec lockrec.Record,
	floor int64,
	check func() error,
) (int64, error) {
	path := filepath.Join(dir, name)
	if !ValidName(name) {
		return 0, &PathError{Op: "write", Path: path, Err: ErrInvalidName}
	}
	unlock, err := lockName(dir, name)
	if err != nil {
		return 0, err
	}
	defer unlock()
	w.step(StepLocked)
	cur, err := current(dir, name, "write")
	if err != nil {
		return 0, err
	}
	if err := checkFence(cur, expect, "write", path); err != nil {
		return 0, err
	}
	if check != nil {
		if err := check(); err != nil {
			return 0, err
		}
	}
	gen := floor
	if cur != nil {
		gen = max(gen, cur.Record.Generation()+1)
	}
	rec.LockGeneration = &gen
	data, err := lockrec.Marshal(&rec)
	if err != nil {
		return 0, err
	}
	if err := readable(data); err != nil {
		return 0, &PathError{Op: "write", Path: path, Err: err}
	}
	if err := w.replace(dir, name, data); err != nil {
		return 0, err
	}
	return gen, nil
}

// current reads dir/name under the flock: nil when absent, an error when it
// is not a readable regular lock file.
func current(dir, name, op string) (*lockrec.Entry, error) {
	path := filepath.Join(dir, name)
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, &PathError{Op: op, Path: path, Err: err}
	}
	if !fi.Mode().IsRegular() {
		return nil, &PathError{Op: op, Path: path, Err: ErrNotRegular}
	}
	bp := bufPool.Get().(*[]byte)
	defer bufPool.Put(bp)
	e := readEntry(dir, dir, name, lockrec.ClassLive, fi.Mode().Type(), true, bp)
	if e.Missing {
		return nil, nil
	}
	if e.Unreadable != nil {
		return &e, &PathError{Op: op, Path: path, Err: errors.Join(ErrUnreadable,
			errors.New(string(e.Unreadable.Reason)+": "+e.Unreadable.Detail))}
	}
	return &e, nil
}

func checkFence(cur *lockrec.Entry, expect Expect, op, path string) error {
	switch {
	case expect.Absent && cur != nil:
		return &PathError{Op: op, Path: path, Err: ErrExists}
	case expect.Absent:
		return nil
	case cur == nil:
		return &PathError{Op: op, Path: path, Err: ErrNotFound}
	case cur.Record.Generation() != expect.Generation || cur.Record.TaskSessionID() != expect.TaskSessionID:
		return &PathError{Op: op, Path: path, Err: ErrFenceMoved}
	}
	return nil
}

// lockName takes the exclusive flock on dir/.<name>.flock.
func lockName(dir, name string) (func(), error) {
	path := filepath.Join(dir, "."+name+".flock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, &PathError{Op: "flock", Path: path, Err: err}
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, &PathError{Op: "flock", Path: path, Err: err}
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// replace atomically replaces dir/name with data: temp file ".tmp-<name>-<rand>"
// (ignored by the loader), fsync, rename, directory fsync.
func (w *Writer) replace(dir, name string, data []byte) error {
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	tmp := filepath.Join(dir, ".tmp-"+name+"-"+hex.EncodeToString(rnd[:]))
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return &PathError{Op: "write", Path: tmp, Err: err}
	}
	fail := func(op string, err error) error {
		f.Close()
		os.Remove(tmp)
		return &PathError{Op: op, Path: tmp, Err: err}
	}
	if _, err := f.Write(data); err != nil {
		return fail("write", err)
	}
	w.step(StepTempWritten)
	if err := f.Sync(); err != nil {
		return fail("fsync", err)
	}
	w.step(StepTempSynced)
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return &PathError{Op: "close", Path: tmp, Err: err}
	}
	target := filepath.Join(dir, name)
	if err := os.Rename(tmp, target); err != nil {
		os.Remove(tmp)
		return &PathError{Op: "rename", Path: target, Err: err}
	}
	w.step(StepRenamed)
	if err := syncDir(dir); err != nil {
		return err
	}
	w.step(StepDirSynced)
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return &PathError{Op: "fsync", Path: dir, Err: err}
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return &PathError{Op: "fsync", Path: dir, Err: err}
	}
	return nil
}

// readable checks bytes about to be written as a lock file against steward's own reader:
// at most MaxFileSize, and a record Decode reads without a fatal finding. It is the last
// line behind the governed core's argument limits: whatever a caller passes, steward never
// writes a lock it would then report unreadable.
func readable(data []byte) error {
	if len(data) > MaxFileSize {
		return fmt.Errorf(
			"%w: %d bytes, over the %d a lock file may hold",
			errWouldBeUnreadable,
			len(data),
			MaxFileSize,
		)
	}
	if _, finds := lockrec.DecodeOwned(data); fatal(finds) { // reads data, never changes it
		for _, f := range finds {
			if f.Fatal() {
				return fmt.Errorf("%w: %s at %s: %s", errWouldBeUnreadable, f.Kind, f.Path, f.Detail)
			}
		}
	}
	return nil
}
