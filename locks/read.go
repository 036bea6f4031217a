package locks

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// MaxFileSize is the largest lock file steward reads (1 MiB). Larger files
// are reported unreadable without being read.
const MaxFileSize = 1 << 20

// UnreadableReason says why a file in the locks directory is not a record.
type UnreadableReason string

// The unreadable reasons.
const (
	UnreadableTooLarge       UnreadableReason = "too-large"
	UnreadableNotRegular     UnreadableReason = "not-regular"
	UnreadableSymlinkEscapes UnreadableReason = "symlink-escapes"
	UnreadableSymlinkLoop    UnreadableReason = "symlink-loop"
	UnreadableDangling       UnreadableReason = "dangling-symlink"
	UnreadableSymlink        UnreadableReason = "symlink"
	UnreadablePermission     UnreadableReason = "permission-denied"
	UnreadableIO             UnreadableReason = "io-error"
	UnreadableEmpty          UnreadableReason = "empty"
	UnreadableNUL            UnreadableReason = "nul-byte"
	UnreadableInvalidUTF8    UnreadableReason = "invalid-utf8"
	UnreadableTruncated      UnreadableReason = "truncated-json"
	UnreadableSyntax         UnreadableReason = "invalid-json"
	UnreadableNotObject      UnreadableReason = "not-object"
)

// Unreadable is why a file could not be read as a record, with detail.
type Unreadable struct {
	Reason UnreadableReason `json:"reason"`
	Detail string           `json:"detail"`
}

// Class says what a file in the locks directory is.
type Class string

// The entry classes.
const (
	ClassLive    Class = "live"    // a per-issue lock file
	ClassPointer Class = "pointer" // a session-<pid>.json pointer, not a lock
	ClassLegacy  Class = "legacy"  // the legacy single-slot file
	ClassRetired Class = "retired" // an archived lock under retired/
)

// Entry is one file of the locks directory as read.
type Entry struct {
	Name       string      // file name (relative to retired/ for retired entries)
	Path       string      // full path
	Class      Class       // what the file is
	Key        Key         // the record's identity, when HasKey
	HasKey     bool        // the record has an integer issue_number
	Record     Record      // what could be decoded (empty when Unreadable)
	Findings   []Finding   // decoder findings
	Unreadable *Unreadable // non-nil when the file is not a readable record
	Missing    bool        // the file does not exist (ReadFile only)
	Size       int64       // bytes, from stat
	ModTime    time.Time   // from stat
	Inode      uint64      // from stat; a rewrite by rename changes it
	LinkTarget string      // resolved target when the entry is a symlink
	Pointer    *Pointer    // for ClassPointer
}

// Pointer is what a session-<pid>.json file says: the process it belongs to
// and, when the file names one, the lock it points to. When the pointer holds
// a lock record itself, the Entry's Record and Key describe it.
type Pointer struct {
	PID    int64  `json:"pid"`
	Target string `json:"target,omitempty"`
}

var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}

// ReadFile reads one file of the locks directory dir (a re-read for
// incremental watching). name may be "retired/<file>". It never blocks on a
// FIFO, never reads more than MaxFileSize+1 bytes, and never follows a
// symlink out of dir.
func ReadFile(dir, name string) Entry {
	class := classify(name)
	if rest, ok := strings.CutPrefix(name, retiredDir+"/"); ok {
		class = ClassRetired
		if !ValidName(rest) {
			return Entry{Name: name, Path: filepath.Join(dir, name), Class: class,
				Unreadable: &Unreadable{Reason: UnreadableIO, Detail: "not a plain file name"}}
		}
	} else if strings.ContainsAny(name, `/\`) || name == "." || name == ".." || name == "" {
		return Entry{Name: name, Path: filepath.Join(dir, name), Class: class,
			Unreadable: &Unreadable{Reason: UnreadableIO, Detail: "not a plain file name"}}
	}
	bp := bufPool.Get().(*[]byte)
	defer bufPool.Put(bp)
	return readEntry(dir, realDir(dir), name, class, fs.FileMode(0), false, bp)
}

func realDir(dir string) string {
	r, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return filepath.Clean(dir)
	}
	return r
}

func classify(name string) Class {
	if strings.HasPrefix(name, "session-") && strings.HasSuffix(name, nameSuffix) {
		if _, err := strconv.ParseInt(name[len("session-"):len(name)-len(nameSuffix)], 10, 64); err == nil {
			return ClassPointer
		}
	}
	return ClassLive
}

// readEntry reads dir/name. typ is the directory entry's type when known
// (known=true), which spares a stat and never opens a non-regular file.
func readEntry(dir, real, name string, class Class, typ fs.FileMode, known bool, bp *[]byte) Entry {
	e := Entry{Name: name, Path: filepath.Join(dir, name), Class: class}
	if !known {
		fi, err := os.Lstat(e.Path)
		if err != nil {
			e.setErr(err)
			return e
		}
		typ = fi.Mode().Type()
	}
	open := e.Path
	if typ&fs.ModeSymlink != 0 {
		target, ok := e.resolve(real)
		if !ok {
			return e
		}
		open, e.LinkTarget = target, target
		fi, err := os.Stat(target)
		if err != nil {
			e.setErr(err)
			return e
		}
		typ = fi.Mode().Type()
	}
	if !typ.IsRegular() {
		e.Unreadable = &Unreadable{Reason: UnreadableNotRegular, Detail: describeType(typ)}
		return e
	}
	data, st, err := readRegular(open, bp)
	e.Size, e.ModTime, e.Inode = st.size, st.mtime, st.ino
	if err != nil {
		e.setErr(err)
		return e
	}
	e.Record, e.Findings = decodeOwned(data)
	e.Key, e.HasKey = e.Record.Key()
	for _, f := range e.Findings {
		if f.Fatal() {
			e.Unreadable = unreadableFor(f)
			break
		}
	}
	if class == ClassPointer {
		e.Pointer = pointerOf(name, &e.Record)
	}
	return e
}

// resolve follows a symlink and checks the target stays inside real.
func (e *Entry) resolve(real string) (string, bool) {
	target, err := filepath.EvalSymlinks(e.Path)
	switch {
	case err != nil && errors.Is(err, fs.ErrNotExist):
		e.Unreadable = &Unreadable{Reason: UnreadableDangling, Detail: err.Error()}
		return "", false
	case err != nil && (errors.Is(err, syscall.ELOOP) || strings.Contains(err.Error(), "too many links")):
		e.Unreadable = &Unreadable{Reason: UnreadableSymlinkLoop, Detail: err.Error()}
		return "", false
	case err != nil:
		e.setErr(err)
		return "", false
	}
	if !strings.HasPrefix(target, real+string(filepath.Separator)) {
		e.LinkTarget = target
		e.Unreadable = &Unreadable{Reason: UnreadableSymlinkEscapes,
			Detail: "symlink resolves outside the locks directory: " + target}
		return "", false
	}
	return target, true
}

func (e *Entry) setErr(err error) {
	switch {
	case errors.Is(err, errTooLarge):
		e.Unreadable = &Unreadable{Reason: UnreadableTooLarge,
			Detail: "larger than " + strconv.Itoa(MaxFileSize) + " bytes (" + strconv.FormatInt(e.Size, 10) + ")"}
	case errors.Is(err, errNotRegular):
		e.Unreadable = &Unreadable{Reason: UnreadableNotRegular, Detail: err.Error()}
	case errors.Is(err, fs.ErrNotExist):
		e.Missing = true
		e.Unreadable = &Unreadable{Reason: UnreadableIO, Detail: "does not exist"}
	case errors.Is(err, syscall.ELOOP):
		e.Unreadable = &Unreadable{Reason: UnreadableSymlinkLoop, Detail: err.Error()}
	case errors.Is(err, fs.ErrPermission):
		e.Unreadable = &Unreadable{Reason: UnreadablePermission, Detail: err.Error()}
	default:
		e.Unreadable = &Unreadable{Reason: UnreadableIO, Detail: err.Error()}
	}
}

func unreadableFor(f Finding) *Unreadable {
	m := map[FindingKind]UnreadableReason{FindingEmpty: UnreadableEmpty, FindingNUL: UnreadableNUL,
		FindingInvalidUTF8: UnreadableInvalidUTF8, FindingTruncated: UnreadableTruncated,
		FindingSyntax: UnreadableSyntax, FindingNotObject: UnreadableNotObject}
	return &Unreadable{Reason: m[f.Kind], Detail: f.Detail}
}

func describeType(t fs.FileMode) string {
	switch {
	case t&fs.ModeDir != 0:
		return "a directory"
	case t&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case t&fs.ModeSocket != 0:
		return "a socket"
	case t&fs.ModeCharDevice != 0:
		return "a character device"
	case t&fs.ModeDevice != 0:
		return "a block device"
	}
	return "not a regular file (" + t.String() + ")"
}

// pointerOf reads a session pointer: the PID from the name and a target path
// from the first string field among the names a pointer may use.
func pointerOf(name string, r *Record) *Pointer {
	pid, _ := strconv.ParseInt(name[len("session-"):len(name)-len(nameSuffix)], 10, 64)
	p := &Pointer{PID: pid}
	for _, k := range []string{"lock_path", "lock_file", "issue_lock_path", "path", "lock"} {
		for _, f := range r.Extra {
			if f.Key == k && len(f.Value) > 1 && f.Value[0] == '"' {
				var s string
				if json.Unmarshal(f.Value, &s) == nil && s != "" {
					p.Target = s
					return p
				}
			}
		}
	}
	return p
}
