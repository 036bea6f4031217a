package gather

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Marks keeps the "last seen" instant of "since you left", one small file per user and
// workspace under Dir — steward's own state directory, never a supervised source's.
type Marks struct {
	// Dir is the directory the marks live in ($XDG_STATE_HOME/steward/seen).
	Dir string
	// Forbidden are the supervised sources' directories: a Dir inside one is refused.
	Forbidden []string
}

// ErrMarkInSource reports a mark directory inside a supervised source's directory.
var ErrMarkInSource = errors.New("the last-seen mark may not be kept inside a supervised source's directory")

type markFile struct {
	User      string `json:"user"`
	Workspace string `json:"workspace"`
	Seen      string `json:"seen"`
}

// Key names one user's view of one workspace.
func Key(user string, src Sources) string {
	abs := func(p string) string {
		if a, err := filepath.Abs(p); err == nil {
			return a
		}
		return p
	}
	h := sha256.Sum256(
		[]byte(user + "\x00" + abs(src.LocksDir) + "\x00" + src.DB.String() + "\x00" + abs(src.AuditPath)),
	)
	return hex.EncodeToString(h[:12])
}

func (m Marks) path(key string) (string, error) {
	if m.Dir == "" {
		return "", errors.New("no state directory for the last-seen mark")
	}
	dir, err := filepath.Abs(m.Dir)
	if err != nil {
		return "", err
	}
	for _, f := range m.Forbidden {
		if f == "" {
			continue
		}
		fa, err := filepath.Abs(f)
		if err != nil {
			continue
		}
		if dir == fa || strings.HasPrefix(dir, fa+string(filepath.Separator)) {
			return "", fmt.Errorf("%w (%s is inside %s)", ErrMarkInSource, dir, fa)
		}
	}
	return filepath.Join(dir, key+".json"), nil
}

// Load returns the last-seen instant; ok is false when none was kept.
func (m Marks) Load(key string) (t time.Time, ok bool, err error) {
	p, err := m.path(key)
	if err != nil {
		return time.Time{}, false, err
	}
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return time.Time{}, false, nil
	}
	if err != nil {
		return time.Time{}, false, err
	}
	var f markFile
	if err := json.Unmarshal(b, &f); err != nil {
		return time.Time{}, false, fmt.Errorf("last-seen mark %s: %w", p, err)
	}
	t, err = time.Parse(time.RFC3339Nano, f.Seen)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("last-seen mark %s: %w", p, err)
	}
	return t.UTC(), true, nil
}

// Save keeps t as the last-seen instant (temp file, fsync, rename; mode 0600).
func (m Marks) Save(key, user, workspace string, t time.Time) error {
	p, err := m.path(key)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	b, _ := json.Marshal(markFile{User: user, Workspace: workspace, Seen: t.UTC().Format(time.RFC3339Nano)})
	tmp, err := os.CreateTemp(filepath.Dir(p), ".seen-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), p)
}
