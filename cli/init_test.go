package cli

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"steward/leases/pgtest"
)

// TestInit: steward init creates steward's schema only in a database it is told to
// initialise (--db given), only as admin and never read-only; it refuses a database
// holding anyone else's tables without writing; a password in the URL is refused
// before anything is opened, and no output quotes it.
func TestInit(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	run := func(args ...string) (int, string) {
		var out, errb bytes.Buffer
		code := Main(args, &out, &errb)
		return code, out.String() + errb.String()
	}
	sqlitePath := filepath.Join(t.TempDir(), "cp", "control_plane.sqlite3")
	if code, out := run("init", "--as-role", "admin"); code != ExitError || !strings.Contains(out, "needs --db") {
		t.Fatalf("init without --db: %d %s", code, out)
	}
	if code, out := run("init", "--db", sqlitePath, "--as-role", "operator"); code != ExitRefused || !strings.Contains(out, "admin") {
		t.Fatalf("init as operator: %d %s", code, out)
	}
	if code, out := run("init", "--db", sqlitePath, "--as-role", "admin", "--read-only"); code != ExitRefused || !strings.Contains(out, "read-only") {
		t.Fatalf("init read-only: %d %s", code, out)
	}
	if code, out := run("init", "--db", sqlitePath, "--as-role", "admin"); code != ExitOK || !strings.Contains(out, "(sqlite) holds steward's schema") {
		t.Fatalf("init on SQLite: %d %s", code, out)
	}
	url := pgtest.NewDB(t)
	if code, out := run("init", "--db", url, "--as-role", "admin", "--json"); code != ExitOK || !strings.Contains(out, `"backend":"postgres"`) {
		t.Fatalf("init on PostgreSQL: %d %s", code, out)
	}
	foreign := pgtest.NewDB(t)
	pgtest.Exec(t, foreign, `CREATE TABLE leases (lease_id text PRIMARY KEY)`)
	if code, out := run("init", "--db", foreign, "--as-role", "admin"); code != ExitError || !strings.Contains(out, "never alters it") {
		t.Fatalf("init on another's DB: %d %s", code, out)
	}
	const pw = "pw-in-argv-8812"
	withPW := strings.Replace(url, "steward@", "steward:"+pw+"@", 1)
	code, out := run("init", "--db", withPW, "--as-role", "admin")
	if code != ExitError || !strings.Contains(out, "db_password_file") || strings.Contains(out, pw) {
		t.Fatalf("init with a password in the URL: %d %s", code, out)
	}
}
