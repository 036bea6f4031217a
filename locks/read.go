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

	"steward/locks/lockrec"
)

// MaxFileSize is the largest lock file steward reads (1 MiB). Larger files
// are reported unreadable without being read.
const MaxFileSize = 1 << 20

var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}

// ReadFile reads one file of the locks directory dir (a re-read for
// incremental watching). name may be "retired/<file>". It never blocks on a
// FIFO, never reads more than MaxFileSize+1 bytes, and never follows a
// symlink out of dir.
func ReadFile(dir, name string) lockrec.Entry {
	class := classify(name)
	if rest, ok := strings.CutPrefix(name, retiredDir+"/"); ok {
		class = lockrec.ClassRetired
		if !ValidName(rest) {
			return lockrec.Entry{Name: name, Path: filepath.Join(dir, name), Class: class,
				Unreadable: &lockrec.Unreadable{Reason: lockrec.UnreadableIO, Detail: "not a plain file name"}}
		}
	} else if strings.ContainsAny(name, `/\`) || name == "." || name == ".." || name == "" {
		return lockrec.Entry{Name: name, Path: filepath.Join(dir, name), Class: class,
			Unreadable: &lockrec.Unreadable{Reason: lockrec.UnreadableIO, Detail: "not a plain file name"}}
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

func classify(name string) lockrec.Class {
	if strings.HasPrefix(name, "session-") && strings.HasSuffix(name, nameSuffix) {
		if _, err := strconv.ParseInt(name[len("session-"):len(name)-len(nameSuffix)], 10, 64); err == nil {
			return lockrec.ClassPointer
		}
	}
	return lockrec.ClassLive
}

// readEntry reads dir/name. typ is the directory entry's type when known
// (known=true), which spares a stat and never opens a non-regular file.
func readEntry(dir, real, name string, class lockrec.Class, typ fs.FileMode, known bool, bp *[]byte) lockrec.Entry {
	e := lockrec.Entry{Name: name, Path: filepath.Join(dir, name), Class: class}
	if !known {
		fi, err := os.Lstat(e.Path)
		if err != nil {
			setErr(&e, err)
			return e
		}
		typ = fi.Mode().Type()
	}
	open := e.Path
	if typ&fs.ModeSymlink != 0 {
		target, ok := resolve(&e, real)
		if !ok {
			return e
		}
		open, e.LinkTarget = target, target
		fi, err := os.Stat(target)
		if err != nil {
			setErr(&e, err)
			return e
		}
		typ = fi.Mode().Type()
	}
	if !typ.IsRegular() {
		e.Unreadable = &lockrec.Unreadable{Reason: lockrec.UnreadableNotRegular, Detail: describeType(typ)}
		return e
	}
	data, st, err := readRegular(open, bp)
	e.Size, e.ModTime, e.Inode = st.size, st.mtime, st.ino
	if err != nil {
		setErr(&e, err)
		return e
	}
	e.Record, e.Findings = lockrec.DecodeOwned(data)
	e.Key, e.HasKey = e.Record.Key()
	for _, f := range e.Findings {
		if f.Fatal() {
			e.Unreadable = unreadableFor(f)
			break
		}
	}
	if class == lockrec.ClassPointer {
		e.Pointer = pointerOf(name, &e.Record)
	}
	return e
}

// resolve follows e's symlink and checks the target stays inside real.
func resolve(e *lockrec.Entry, real string) (string, bool) {
	target, err := filepath.EvalSymlinks(e.Path)
	switch {
	case err != nil && errors.Is(err, fs.ErrNotExist):
		e.Unreadable = &lockrec.Unreadable{Reason: lockrec.UnreadableDangling, Detail: err.Error()}
		return "", false
	case err != nil && (errors.Is(err, syscall.ELOOP) || strings.Contains(err.Error(), "too many links")):
		e.Unreadable = &lockrec.Unreadable{Reason: lockrec.UnreadableSymlinkLoop, Detail: err.Error()}
		return "", false
	case err != nil:
		setErr(e, err)
		return "", false
	}
	if !strings.HasPrefix(target, real+string(filepath.Separator)) {
		e.LinkTarget = target
		e.Unreadable = &lockrec.Unreadable{Reason: lockrec.UnreadableSymlinkEscapes,
			Detail: "symlink resolves outside the locks directory: " + target}
		return "", false
	}
	return target, true
}

// setErr records why e could not be read.
func setErr(e *lockrec.Entry, err error) {
	switch {
	case errors.Is(err, errTooLarge):
		e.Unreadable = &lockrec.Unreadable{Reason: lockrec.UnreadableTooLarge,
			Detail: "larger than " + strconv.Itoa(MaxFileSize) + " bytes (" + strconv.FormatInt(e.Size, 10) + ")"}
	case errors.Is(err, errNotRegular):
		e.Unreadable = &lockrec.Unreadable{Reason: lockrec.UnreadableNotRegular, Detail: err.Error()}
	case errors.Is(err, fs.ErrNotExist):
		e.Missing = true
		e.Unreadable = &lockrec.Unreadable{Reason: lockrec.UnreadableIO, Detail: "does not exist"}
	case errors.Is(err, syscall.ELOOP):
		e.Unreadable = &lockrec.Unreadable{Reason: lockrec.UnreadableSymlinkLoop, Detail: err.Error()}
	case errors.Is(err, fs.ErrPermission):
		e.Unreadable = &lockrec.Unreadable{Reason: lockrec.UnreadablePermission, Detail: err.Error()}
	default:
		e.Unreadable = &lockrec.Unreadable{Reason: lockrec.UnreadableIO, Detail: err.Error()}
	}
}

func unreadableFor(f lockrec.Finding) *lockrec.Unreadable {
	m := map[lockrec.FindingKind]lockrec.UnreadableReason{
		lockrec.FindingEmpty:       lockrec.UnreadableEmpty,
		lockrec.FindingNUL:         lockrec.UnreadableNUL,
		lockrec.FindingInvalidUTF8: lockrec.UnreadableInvalidUTF8,
		lockrec.FindingTruncated:   lockrec.UnreadableTruncated,
		lockrec.FindingSyntax:      lockrec.UnreadableSyntax,
		lockrec.FindingNotObject:   lockrec.UnreadableNotObject,
	}
	return &lockrec.Unreadable{Reason: m[f.Kind], Detail: f.Detail}
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
func pointerOf(name string, r *lockrec.Record) *lockrec.Pointer {
	pid, _ := strconv.ParseInt(name[len("session-"):len(name)-len(nameSuffix)], 10, 64)
	p := &lockrec.Pointer{PID: pid}
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
