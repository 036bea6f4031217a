package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"steward/attention"
)

// version is the state file's format version; a file of another version is not read.
const version = 1

// maxSize bounds the state file read: a larger file is an error, never read whole.
const maxSize = 16 << 20

// The surfaces that keep a state of their own: each hears about entries for its own people
// (the notify command's on-call, the person at the screen), so one's notification is not
// the other's.
const (
	SurfaceWatch     = "watch"
	SurfaceWorkbench = "ui"
)

// Surface names the state of kind (SurfaceWatch, SurfaceWorkbench) for a workspace of the
// config file ("" when none is named): workspaces that share an audit log keep states
// apart. Characters other than letters, digits, '.', '-' and '_' in the name become '_'.
func Surface(kind, workspace string) string {
	if workspace == "" {
		return kind
	}
	b := []byte(workspace)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_') {
			b[i] = '_'
		}
	}
	return kind + "." + string(b)
}

// Path is the state file of surface beside the audit log at auditPath (and its attention
// file, `<audit log>.attention.jsonl`).
func Path(auditPath, surface string) string {
	return auditPath + ".attention-state-" + surface + ".json"
}

// file is the state file's content.
type file struct {
	V int `json:"v"`
	attention.State
}

// Load reads the state file at path. A missing file is an empty state and no error (a
// first start). A file that cannot be read, is larger than MaxSize, or does not decode as
// this version is an error naming it: the caller says so, keeps the file aside (SetAside)
// and starts afresh.
func Load(path string) (attention.State, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return attention.State{}, nil
	}
	if err != nil {
		return attention.State{}, fmt.Errorf("attention state %s: %w", path, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxSize+1))
	if err != nil {
		return attention.State{}, fmt.Errorf("attention state %s: %w", path, err)
	}
	if len(b) > maxSize {
		return attention.State{}, fmt.Errorf("attention state %s: larger than %d bytes", path, maxSize)
	}
	var st file
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&st); err != nil {
		return attention.State{}, fmt.Errorf("attention state %s: not decodable: %w", path, err)
	}
	if dec.More() {
		return attention.State{}, fmt.Errorf("attention state %s: trailing data after the state", path)
	}
	if st.V != version {
		return attention.State{}, fmt.Errorf("attention state %s: version %d, this steward reads %d", path, st.V, version)
	}
	return st.State, nil
}

// save writes st to path crash-safely: a temp file beside it (mode 0600), written and
// fsync'd, renamed over path, the directory fsync'd. The directory is created (0700) when
// missing.
func save(path string, st attention.State) error {
	b, err := json.Marshal(file{V: version, State: st})
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("attention state %s: %w", path, err)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("attention state %s: %w", path, err)
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := tmp.Chmod(0o600); err != nil {
		return fmt.Errorf("attention state %s: %w", path, err)
	}
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("attention state %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("attention state %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("attention state %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("attention state %s: %w", path, err)
	}
	done = true
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("attention state %s: %w", path, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("attention state %s: %w", path, err)
	}
	return nil
}

// SetAside keeps a state file Load could not read as path + ".bad" (replacing an older
// one), so that the next Save does not destroy what someone may want to look at; it
// returns the new name.
func SetAside(path string) (string, error) {
	bad := path + ".bad"
	if err := os.Rename(path, bad); err != nil {
		return "", fmt.Errorf("attention state %s: %w", path, err)
	}
	return bad, nil
}

// Saver saves the states of one tracker in the order of their revisions (attention.Tracker.Rev):
// a save that arrives after a later revision's is dropped, so that saves run concurrently
// (the workbench runs each in a command of its own) never put an older state over a newer
// one. Safe for concurrent use.
type Saver struct {
	path string
	mu   sync.Mutex
	last uint64
	has  bool
}

// NewSaver returns a Saver for the state file at path.
func NewSaver(path string) *Saver { return &Saver{path: path} }

// Path is the file the Saver writes.
func (s *Saver) Path() string { return s.path }

// Save writes st, the state at revision rev, unless a later revision was saved already.
func (s *Saver) Save(rev uint64, st attention.State) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.has && rev <= s.last {
		return nil
	}
	if err := save(s.path, st); err != nil {
		return err
	}
	s.last, s.has = rev, true
	return nil
}
