package govern

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"steward/leases"
)

// InitWorkspace creates an empty workspace for demos and tests: the locks directory
// (0700), <repo-root>/branches, and a migrated control-plane DB — a SQLite file, or
// steward's schema in the PostgreSQL database a postgres:// DBPath names (leases.InitPG,
// which refuses a database holding anyone else's tables). It is the one sanctioned way
// to create the stores; it refuses nothing that exists already (migration is
// idempotent).
func InitWorkspace(ws Workspace) error {
	t := ws.DBTarget()
	dirs := []string{ws.LocksDir, filepath.Join(ws.RepoRoot, "branches")}
	if !t.Postgres() {
		dirs = append(dirs, filepath.Dir(ws.DBPath))
	}
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("init workspace: %w", err)
		}
	}
	if t.Postgres() {
		if _, err := leases.InitPG(context.Background(), t); err != nil {
			return fmt.Errorf("init workspace: %w", err)
		}
		return nil
	}
	if err := leases.Migrate(ws.DBPath); err != nil {
		return fmt.Errorf("init workspace: %w", err)
	}
	return nil
}
