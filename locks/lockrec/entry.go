package lockrec

import "time"

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

// Snapshot is one full scan of a locks directory.
type Snapshot struct {
	Dir      string
	Live     []Entry  // per-issue lock files, readable or not, by name
	Pointers []Entry  // session-<pid>.json pointer files
	Legacy   *Entry   // the legacy slot, nil when absent
	Retired  []Entry  // archived locks under retired/, by name
	Ignored  []string // dot files (temp files, flock sidecars) and non-.json names
	// RetiredUnavailable is set when retired/ exists but cannot be listed.
	RetiredUnavailable *Unreadable
}

// ByKey groups the readable live entries by item (Key.Identity: org and repo
// compared case-insensitively); a key with more than one entry is a
// duplicate-live-lock.
func (s *Snapshot) ByKey() map[Key][]*Entry {
	m := make(map[Key][]*Entry, len(s.Live))
	for i := range s.Live {
		if e := &s.Live[i]; e.HasKey && e.Unreadable == nil {
			k := e.Key.Identity()
			m[k] = append(m[k], e)
		}
	}
	return m
}
