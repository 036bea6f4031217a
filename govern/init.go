package govern

import (
	"fmt"
	"os"
	"path/filepath"

	"steward/leases"
)

// InitWorkspace creates an empty workspace for demos and tests: the locks directory
// (0700), <repo-root>/branches, and a migrated control-plane DB. It is the one sanctioned
// way to create the stores; it refuses nothing that exists already (migration is
// idempotent).
func InitWorkspace(ws Workspace) error {
	for _, d := range []string{ws.LocksDir, filepath.Join(ws.RepoRoot, "branches"), filepath.Dir(ws.DBPath)} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("init workspace: %w", err)
		}
	}
	if err := leases.Migrate(ws.DBPath); err != nil {
		return fmt.Errorf("init workspace: %w", err)
	}
	return nil
}
