package foreign

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Lock is what the legacy tool records about its claim.
type Lock struct {
	Remote, Org, Repo string
	Issue             int64
	Branch            string
	// Worktree is the worktree's absolute path.
	Worktree string
	// Username and Profile are the claimant, at the top level (the legacy placement).
	Username, Profile string
	PID               int
}

// Bytes is the legacy record as the old tool writes it: the seed fixture
// legacy-top-level-claimant.json's shape — the item, branch_name, worktree_path, a top-level
// claimant, lease_id null, pid and session_pid.
func (l Lock) Bytes() []byte {
	rec := struct {
		Remote       string `json:"remote"`
		Org          string `json:"org"`
		Repo         string `json:"repo"`
		IssueNumber  int64  `json:"issue_number"`
		BranchName   string `json:"branch_name"`
		WorktreePath string `json:"worktree_path"`
		Claimant     struct {
			Username string `json:"username"`
			Profile  string `json:"profile"`
		} `json:"claimant"`
		LeaseID    *string `json:"lease_id"`
		PID        int     `json:"pid"`
		SessionPID int     `json:"session_pid"`
	}{Remote: l.Remote, Org: l.Org, Repo: l.Repo, IssueNumber: l.Issue, BranchName: l.Branch, WorktreePath: l.Worktree,
		PID: l.PID, SessionPID: l.PID}
	rec.Claimant.Username, rec.Claimant.Profile = l.Username, l.Profile
	b, _ := json.MarshalIndent(rec, "", "  ")
	return append(b, '\n')
}

// Name is the old tool's own file name for an item: "legacy-<org>-<repo>-<n>.json", lower
// case (our own invention — the seed shows no file-name pattern; what matters is that it is
// not steward's name, so the tool's check for "its" file misses steward's lock).
func Name(org, repo string, n int64) string {
	clean := func(s string) string {
		return strings.Map(func(r rune) rune {
			switch {
			case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '.':
				return r
			case r >= 'A' && r <= 'Z':
				return r + ('a' - 'A')
			}
			return '-'
		}, s)
	}
	return fmt.Sprintf("legacy-%s-%s-%d.json", clean(org), clean(repo), n)
}

// path joins a name the old tool made with dir, refusing anything else.
func path(dir, name string) (string, error) {
	if !strings.HasPrefix(name, "legacy-") || filepath.Base(name) != name || !strings.HasSuffix(name, ".json") {
		return "", fmt.Errorf("foreign: %q is not a legacy lock name", name)
	}
	return filepath.Join(dir, name), nil
}

// Exists reports whether the old tool's own file for the item is there: the only check the
// old tool makes before it writes.
func Exists(dir, name string) (bool, error) {
	p, err := path(dir, name)
	if err != nil {
		return false, err
	}
	_, err = os.Lstat(p)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	}
	return false, err
}

// Write writes l in place under name (create or truncate, then write): the old tool's way.
func Write(dir, name string, l Lock) error {
	p, err := path(dir, name)
	if err != nil {
		return err
	}
	return os.WriteFile(p, l.Bytes(), 0o600)
}

// WriteTorn writes only the first half of l's bytes under name: what the old tool leaves
// when it is killed in the middle of its in-place write.
func WriteTorn(dir, name string, l Lock) error {
	p, err := path(dir, name)
	if err != nil {
		return err
	}
	b := l.Bytes()
	return os.WriteFile(p, b[:len(b)/2], 0o600)
}

// Remove removes the old tool's file (its release, or its start-up recovery of its own
// predecessor's lock); a file that is already gone is fine.
func Remove(dir, name string) error {
	p, err := path(dir, name)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
