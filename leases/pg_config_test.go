package leases

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestTargetShownWithoutSecrets: a PostgreSQL target is shown with its scheme, user, host,
// port and database — never a password, never the query (libpq lets it carry one) — and a
// location that is no URL is shown as such, not echoed.
func TestTargetShownWithoutSecrets(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ loc, want string }{
		{"postgres://bob:s3cret@db.example:5432/cp?sslmode=require&password=x", "postgres://bob@db.example:5432/cp"},
		{"postgresql://db.example/cp", "postgresql://db.example/cp"},
		{" postgres://bob@db.example/cp ", "postgres://bob@db.example/cp"},
		{"postgres://bob:s3cret@db.example:bad port/cp", "postgres://(unparseable URL)"},
		{"/var/lib/steward/control_plane.sqlite3", "/var/lib/steward/control_plane.sqlite3"},
	} {
		if got := (Target{Loc: c.loc}).String(); got != c.want {
			t.Errorf("%q shown as %q, want %q", c.loc, got, c.want)
		}
	}
}

// TestPGConfigKeepsTheURLsSettings: the session settings a PostgreSQL URL gives (its
// application_name, a search_path) are kept; steward adds its lock wait, its application
// name where the URL gives none, and a read-only default for readers.
func TestPGConfigKeepsTheURLsSettings(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		loc      string
		readOnly bool
		want     map[string]string
	}{
		{"postgres://u@db.example/cp?application_name=night-shift&search_path=cp", false,
			map[string]string{"application_name": "night-shift", "search_path": "cp", "lock_timeout": "1500"}},
		{"postgres://u@db.example/cp", true, map[string]string{"application_name": "steward", "lock_timeout": "1500",
			"default_transaction_read_only": "on"}},
	} {
		cfg, err := pgConfig(Target{Loc: c.loc}, c.readOnly, 1500*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range c.want {
			if cfg.RuntimeParams[k] != v {
				t.Errorf("%s: %s = %q, want %q (all: %v)", c.loc, k, cfg.RuntimeParams[k], v, cfg.RuntimeParams)
			}
		}
		if _, ok := cfg.RuntimeParams["default_transaction_read_only"]; ok != c.readOnly {
			t.Errorf("%s: read-only default set %v, want %v", c.loc, ok, c.readOnly)
		}
	}
}

// TestPendingNameFitsPostgreSQL: a governed attempt's transactions are named
// "steward attempt <id>" so that a lost one can be found; PostgreSQL keeps 63 bytes of a
// name, so an id that would be cut gets no name (a cut one could match another attempt).
func TestPendingNameFitsPostgreSQL(t *testing.T) {
	t.Parallel()
	fits := strings.Repeat("a", 63-len(pendingPrefix))
	for _, c := range []struct{ attempt, want string }{
		{"att-1", "steward attempt att-1"},
		{fits, "steward attempt " + fits},
		{fits + "b", ""},
		{"", ""},
	} {
		if got := pendingName(c.attempt); got != c.want {
			t.Errorf("pendingName(%q) = %q, want %q", c.attempt, got, c.want)
		}
	}
}

// TestPasswordFileFirstLine: a password file gives its first line, with or without a line
// end, as libpq reads a password; an empty one, or one others may read, is refused.
func TestPasswordFileFirstLine(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for i, c := range []struct {
		text string
		mode os.FileMode
		want string // "" when refused
	}{
		{"s3cret\n", 0o600, "s3cret"},
		{"s3cret", 0o600, "s3cret"},
		{"s3cret\r\nsecond line\n", 0o400, "s3cret"},
		{"", 0o600, ""},
		{"\nlater\n", 0o600, ""},
		{"s3cret\n", 0o644, ""},
	} {
		path := filepath.Join(dir, "pw"+strconv.Itoa(i))
		if err := os.WriteFile(path, []byte(c.text), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, c.mode); err != nil {
			t.Fatal(err)
		}
		got, err := readPasswordFile(path)
		if got != c.want || (err == nil) != (c.want != "") {
			t.Errorf("%q (mode %v): %q %v, want %q", c.text, c.mode, got, err, c.want)
		}
	}
}
