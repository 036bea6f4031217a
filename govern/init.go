package govern

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"steward/leases"
)

// InitDB creates or migrates steward's control-plane schema in the DB t names (steward
// init): a SQLite file (created, with its directory, in WAL mode) or a PostgreSQL
// database (leases.InitPG). A DB holding anyone else's schema is refused
// (leases.ErrForeignSchema) before anything is written: steward creates and migrates
// only a database it was told to initialise, and reads every other as it is.
func InitDB(t leases.Target) error {
	if t.Postgres() {
		_, err := leases.InitPG(context.Background(), t)
		return err
	}
	return leases.Migrate(t.Loc)
}

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
