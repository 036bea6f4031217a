package cli

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"steward/govern"
	"steward/leases"
	"steward/termsafe"
)

// addInitCommand adds `steward init --db LOC`: create or migrate steward's control-plane
// schema in the database LOC names. It is the only command that creates or alters a
// schema; every other command reads a DB as it is.
func addInitCommand(root *cobra.Command, g *globals) {
	root.AddCommand(&cobra.Command{
		Use:   "init",
		Short: "Create or migrate steward's control-plane schema in the DB --db names (SQLite file or postgres:// URL)",
		Long: "steward init creates steward's control-plane tables in the database --db names, or migrates\n" +
			"tables an earlier steward init made. A SQLite --db is created with its directory; a\n" +
			"postgres:// --db must exist (createdb) and be empty, or hold steward's own schema: a\n" +
			"database holding anyone else's tables is refused before anything is written.\n" +
			"The PostgreSQL password comes from --db-password-file, PGPASSWORD or ~/.pgpass, never\n" +
			"the URL. Needs --as-role admin.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f := cmd.Flags().Lookup("db"); f == nil || !f.Changed {
				return &exitError{code: ExitError, msg: "steward init needs --db naming the database to initialise " +
					"(a SQLite file, or postgres://user@host:port/dbname); it never initialises a default location"}
			}
			return runInit(cmd, g)
		},
	})
}

func runInit(cmd *cobra.Command, g *globals) error {
	t := leases.Target{Loc: g.dbPath, PasswordFile: g.dbPasswordFile}
	shown := termsafe.Line(t.String())
	if g.readOnly {
		return &exitError{
			code: ExitRefused,
			msg:  "steward init: refused, read-only (" + termsafe.Line(g.readOnlyWhy) + "); nothing was written",
		}
	}
	if role, err := govern.ParseRole(g.role); err != nil || role != govern.RoleAdmin {
		return &exitError{
			code: ExitRefused,
			msg:  "steward init: refused, creating a control-plane schema needs --as-role admin; nothing was written",
		}
	}
	if err := govern.InitDB(t); err != nil {
		msg := "steward init: " + termsafe.Line(err.Error())
		if errors.Is(err, leases.ErrForeignSchema) {
			msg += "\nsteward reads such a database as it is and never alters it; name an empty database to initialise"
		}
		return &exitError{code: ExitError, msg: msg}
	}
	backend := "sqlite"
	if t.Postgres() {
		backend = "postgres"
	}
	if g.jsonOut {
		return json.NewEncoder(cmd.OutOrStdout()).Encode(map[string]string{"db": shown, "backend": backend,
			"schema_version": leases.SchemaVersion})
	}
	fmt.Fprintf(
		cmd.OutOrStdout(),
		"the control-plane DB %s (%s) holds steward's schema (version %s); point --db (or db_url in the config) at it\n",
		shown,
		backend,
		leases.SchemaVersion,
	)
	return nil
}
