package locks

import "errors"

// Sentinel errors of the write primitives. They arrive wrapped in a
// *PathError; test for them with errors.Is.
var (
	// ErrFenceMoved is returned by WriteCAS and Archive when the lock file's
	// lock_generation or work_lease.task_session_id is no longer the one the
	// caller expected: someone wrote the lock since it was read.
	ErrFenceMoved = errors.New("lock fence moved (lock_generation or task_session_id changed)")
	// ErrExists is returned by WriteCAS when the caller expected no lock and
	// one exists, and by Restore when a live lock for the same key exists
	// (the item was claimed since it was archived).
	ErrExists = errors.New("lock already exists")
	// ErrNotFound is returned when the lock (or archived lock) the caller
	// expected to exist does not.
	ErrNotFound = errors.New("lock not found")
	// ErrInvalidName is returned for a name that is not a plain lock file
	// name in the directory: separators, "..", a leading dot, control
	// characters, no ".json" suffix, or longer than 255 bytes.
	ErrInvalidName = errors.New("invalid lock file name")
	// ErrNotRegular is returned when the path is a symlink, directory, FIFO,
	// device or socket: the write primitives touch regular files only.
	ErrNotRegular = errors.New("not a regular file")
	// ErrUnreadable is returned when the current lock cannot be read or
	// decoded, so its fence cannot be checked (fail closed).
	ErrUnreadable = errors.New("current lock is unreadable")
	// errWouldBeUnreadable is returned by every write primitive, before anything is
	// written, for a record whose encoding steward's own reader would refuse: larger than
	// MaxFileSize, or not a readable record. A lock steward writes is always one it reads.
	errWouldBeUnreadable = errors.New("the record would not be readable as a lock file")
)

// PathError records an error, the operation and the file path that caused it.
type PathError struct {
	Op   string
	Path string
	Err  error
}

// Error renders "locks: <op> <path>: <err>".
func (e *PathError) Error() string {
	s := "locks: " + e.Op
	if e.Path != "" {
		s += " " + e.Path
	}
	return s + ": " + e.Err.Error()
}

// Unwrap returns the underlying error.
func (e *PathError) Unwrap() error { return e.Err }
