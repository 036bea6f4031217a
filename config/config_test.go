package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const secret = "s3cr3t-t0ken-value-0123456789"

func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

// noConfig is a Getenv with no config file at the default place (XDG_CONFIG_HOME an empty
// folder) beside the variables of m; only the default place may be absent.
func noConfig(t *testing.T, m map[string]string) func(string) (string, bool) {
	t.Helper()
	e := map[string]string{"XDG_CONFIG_HOME": t.TempDir()}
	for k, v := range m {
		e[k] = v
	}
	return env(e)
}

func write(t *testing.T, body string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(p, []byte(body), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
	return p
}

func codes(r *Resolved) []string {
	var out []string
	for _, p := range r.Problems {
		out = append(out, p.Code)
	}
	return out
}

func has(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestPrecedenceFlagEnvFileDefault(t *testing.T) {
	p := write(t, `
workspaces:
  w:
    locks_dir: /file/locks
    db_path: /file/db
    repo_root: /file/repo
    gitea: {url: "http://gitea.test", token: `+secret+`, owner: o, repo: r}
theme: dark
`, 0o600)
	r, err := Load(Inputs{Path: p, Getenv: env(map[string]string{"GITEA_CONTROL_PLANE_DB": "/env/db", "STEWARD_REPO_ROOT": "/env/repo", "HOME": "/home/u"}),
		Flags: map[string]string{KeyRepoRoot: "/flag/repo"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		key, val string
		src      Source
	}{
		{KeyLocksDir, "/file/locks", FromFile},
		{KeyDBPath, "/env/db", fromEnv},
		{KeyRepoRoot, "/flag/repo", fromFlag},
		{KeyAuditLog, "/home/u/.local/state/steward/audit.jsonl", FromDefault},
		{KeyTheme, "dark", FromFile},
		{KeyGiteaToken, secret, FromFile},
	} {
		if s := r.Get(tc.key); s.Value != tc.val || s.Source != tc.src {
			t.Errorf("%s = %q from %s, want %q from %s", tc.key, s.Value, s.Source, tc.val, tc.src)
		}
	}
	if r.Workspace != "w" || r.HasErrors() {
		t.Errorf("workspace %q, problems %v", r.Workspace, r.Problems)
	}
	if d := r.Get(KeyGiteaToken).Display(); d != "(set, hidden)" {
		t.Errorf("token displays as %q", d)
	}
}

func TestTokenFileReadableByOthersWarns(t *testing.T) {
	p := write(t, "workspaces:\n  w:\n    gitea: {url: 'http://g.test', token: "+secret+", owner: o, repo: r}\n", 0o644)
	r, err := Load(Inputs{Path: p, Getenv: env(nil)})
	if err != nil {
		t.Fatal(err)
	}
	if !has(codes(r), "config-permissions") {
		t.Fatalf("no permission warning for a world-readable token file: %v", r.Problems)
	}
	for _, pr := range r.Problems {
		if strings.Contains(pr.Message, secret) {
			t.Fatalf("problem quotes the token: %q", pr.Message)
		}
	}
	p2 := write(t, "workspaces:\n  w:\n    gitea: {tea_login: main, owner: o, repo: r}\n", 0o644)
	r2, _ := Load(Inputs{Path: p2, Getenv: env(nil)})
	if has(codes(r2), "config-permissions") {
		t.Fatal("a file without a token needs no permission warning")
	}
}

func TestTokenFile(t *testing.T) {
	dir := t.TempDir()
	tf := filepath.Join(dir, "token")
	if err := os.WriteFile(tf, []byte(secret+"\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	p := write(t, "workspaces:\n  w:\n    gitea: {url: 'http://g.test', token_file: "+tf+", owner: o, repo: r}\n", 0o600)
	r, err := Load(Inputs{Path: p, Getenv: env(nil)})
	if err != nil {
		t.Fatal(err)
	}
	if s := r.Get(KeyGiteaToken); s.Value != secret || s.Source != FromFile {
		t.Fatalf("token from file: %q from %s", s.Display(), s.Source)
	}
	if !has(codes(r), "token-file-permissions") {
		t.Fatalf("no warning for a group-readable token file: %v", r.Problems)
	}
}

func TestProblems(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       string
	}{
		{"unknown key", "colour: blue\n", "parse"},
		{"bad duration", "clarification_sla: soon\n", "parse"},
		{"zero duration", "clarification_sla: 0s\n", "parse"},
		{"bad theme", "theme: neon\n", "bad-theme"},
		{"bad role", "roles: {alice: superuser}\n", "bad-role"},
		{"two workspaces", "workspaces: {a: {}, b: {}}\n", "workspace-ambiguous"},
		{"unknown default", "default_workspace: x\nworkspaces: {a: {}}\n", "workspace-unknown"},
		{"url without token", "workspaces: {a: {gitea: {url: 'http://g.test'}}}\n", "gitea-no-token"},
		{"url with credentials", "workspaces: {a: {gitea: {url: 'http://u:p@g.test', token: x}}}\n", "url-credentials"},
		{"empty marker", "marker_labels: ['']\n", "empty-marker"},
		{"two documents", "theme: dark\n---\ntheme: light\n", "parse"},
		{"db_path and db_url", "workspaces: {a: {db_path: /x.db, db_url: 'postgres://u@h/d'}}\n", "db-twice"},
		{"db_url not postgres", "workspaces: {a: {db_url: 'mysql://u@h/d'}}\n", "db-url"},
		{"db_url with a password", "workspaces: {a: {db_url: 'postgres://u:pw@h/d'}}\n", "db-url"},
		{"db_url with a password parameter", "workspaces: {a: {db_url: 'postgres://u@h/d?password=pw'}}\n", "db-url"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Load(Inputs{Path: write(t, tc.body, 0o600), Getenv: env(nil)})
			if err != nil {
				t.Fatal(err)
			}
			if !has(codes(r), tc.want) || !r.HasErrors() {
				t.Fatalf("problems %v, want an error %s", codes(r), tc.want)
			}
		})
	}
}

// message is the message of r's first problem with code, "" when it has none.
func message(r *Resolved, code string) string {
	for _, p := range r.Problems {
		if p.Code == code {
			return p.Message
		}
	}
	return ""
}

// TestValueChecks: each value a flag, variable or file sets is checked at the bounds of
// what it accepts — the last value accepted and the first refused on each side — and a
// refusal names what is wrong.
func TestValueChecks(t *testing.T) {
	x40 := strings.Repeat("x", 40)
	for _, tc := range []struct {
		name string
		env  map[string]string
		code string // the problem the value gets
		bad  bool   // whether it gets it
		msg  string // a part of its message (when bad)
	}{
		{"re-escalations 0", map[string]string{"STEWARD_NOTIFY_REESCALATIONS": "0"}, "bad-count", false, ""},
		{"re-escalations 100", map[string]string{"STEWARD_NOTIFY_REESCALATIONS": "100"}, "bad-count", false, ""},
		{"re-escalations -1", map[string]string{"STEWARD_NOTIFY_REESCALATIONS": "-1"}, "bad-count", true, "from 0 to 100"},
		{"re-escalations 101", map[string]string{"STEWARD_NOTIFY_REESCALATIONS": "101"}, "bad-count", true, "from 0 to 100"},
		{"a timeout of 1ns", map[string]string{"STEWARD_NOTIFY_TIMEOUT": "1ns"}, "bad-duration", false, ""},
		{"a timeout of 0s", map[string]string{"STEWARD_NOTIFY_TIMEOUT": "0s"}, "bad-duration", true, "not a positive duration"},
		{"a timeout of -1s", map[string]string{"STEWARD_NOTIFY_TIMEOUT": "-1s"}, "bad-duration", true, "not a positive duration"},
		{"an http URL", map[string]string{"STEWARD_GITEA_URL": "http://g.test"}, "bad-url", false, ""},
		{"an https URL", map[string]string{"STEWARD_GITEA_URL": "https://g.test"}, "bad-url", false, ""},
		{"an ftp URL", map[string]string{"STEWARD_GITEA_URL": "ftp://g.test"}, "bad-url", true, "not an http(s) URL"},
		{"a URL with no host", map[string]string{"STEWARD_GITEA_URL": "https:///x"}, "bad-url", true, "not an http(s) URL"},
		{"owner and repo", map[string]string{"STEWARD_GITEA_OWNER": "o", "STEWARD_GITEA_REPO": "r"}, "gitea-repo", false, ""},
		{"an owner only", map[string]string{"STEWARD_GITEA_OWNER": "o"}, "gitea-repo", true, "not both set"},
		{"a repo only", map[string]string{"STEWARD_GITEA_REPO": "r"}, "gitea-repo", true, "not both set"},
		{"a postgres URL with a host", map[string]string{"GITEA_CONTROL_PLANE_DB": "postgres://u@h/cp"}, "db-url", false, ""},
		{"a postgres URL with a host parameter", map[string]string{"GITEA_CONTROL_PLANE_DB": "postgres:///cp?host=/run/postgresql"},
			"db-url", false, ""},
		{"a postgres URL with no host", map[string]string{"GITEA_CONTROL_PLANE_DB": "postgres:///cp"}, "db-url", true, "names no host"},
		{"a value of 40 bytes is quoted whole", map[string]string{"STEWARD_THEME": x40}, "bad-theme", true, `theme "` + x40 + `" (`},
		{"a value of 41 bytes is clipped", map[string]string{"STEWARD_THEME": x40 + "y"}, "bad-theme", true, `theme "` + x40 + `…" (`},
		{"a token of 4 bytes is hidden", map[string]string{"STEWARD_GITEA_TOKEN": "abcd", "STEWARD_THEME": "abcd"}, "bad-theme", true,
			`theme "[hidden]" (`},
		{"3 bytes are no token", map[string]string{"STEWARD_GITEA_TOKEN": "abc", "STEWARD_THEME": "abc"}, "bad-theme", true, `theme "abc" (`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Load(Inputs{Getenv: noConfig(t, tc.env), SystemPaths: []string{}})
			if err != nil {
				t.Fatal(err)
			}
			msg := message(r, tc.code)
			if tc.bad && !strings.Contains(msg, tc.msg) || !tc.bad && msg != "" {
				t.Fatalf("%s: %q, want it %v with %q (problems %v)", tc.code, msg, tc.bad, tc.msg, r.Problems)
			}
		})
	}
}

// TestDBScheme: a control-plane DB written as a URL of another scheme than postgres is
// refused, naming the scheme (a letter first, then letters, digits, +, - or .: RFC 3986);
// anything else before "://" is a SQLite file's path, whatever its name.
func TestDBScheme(t *testing.T) {
	for _, tc := range []struct{ db, scheme string }{
		{"mysql://u@h/d", "mysql"},
		{"a://x", "a"},
		{"z://x", "z"},
		{"A://x", "a"},
		{"Z://x", "z"},
		{"MySQL://h/d", "mysql"},
		{"x0://y", "x0"},
		{"x9://y", "x9"},
		{"svn+ssh://h/r", "svn+ssh"},
		{"x-y://h", "x-y"},
		{"x.y://h", "x.y"},
		{" sqlite://x ", "sqlite"},
		{"0x://y", ""},
		{"9x://y", ""},
		{"+x://y", ""},
		{"-x://y", ""},
		{".x://y", ""},
		{"x_z://h", ""},
		{"x y://h", ""},
		{"://x", ""},
		{"/var/db/a:b.sqlite3", ""},
		{"/var/db/control_plane.sqlite3", ""},
	} {
		t.Run(tc.db, func(t *testing.T) {
			r, err := Load(Inputs{Getenv: noConfig(t, map[string]string{"GITEA_CONTROL_PLANE_DB": tc.db}), SystemPaths: []string{}})
			if err != nil {
				t.Fatal(err)
			}
			msg := message(r, "db-scheme")
			if tc.scheme == "" && msg != "" || tc.scheme != "" && !strings.Contains(msg, " is a "+tc.scheme+":// URL, and "+tc.scheme+" is not supported") {
				t.Fatalf("db-scheme %q, want scheme %q", msg, tc.scheme)
			}
		})
	}
	// Only the DB's value is read as a URL: a lock directory's name is a path.
	r, _ := Load(Inputs{Getenv: noConfig(t, map[string]string{"STEWARD_LOCKS_DIR": "mysql://x"}), SystemPaths: []string{}})
	if msg := message(r, "db-scheme"); msg != "" {
		t.Fatalf("a lock directory named mysql://x: %s", msg)
	}
}

// TestFileSizeLimit: a config file of 1 MiB is read; one byte more is refused unread, by
// Load (an error: the file exists but is not read) and by Parse.
func TestFileSizeLimit(t *testing.T) {
	sized := func(n int) []byte {
		head := "theme: dark\n#"
		return []byte(head + strings.Repeat("x", n-len(head)-1) + "\n")
	}
	p := write(t, string(sized(maxFileSize)), 0o600)
	r, err := Load(Inputs{Path: p, Getenv: env(nil), SystemPaths: []string{}})
	if err != nil || !r.Found || r.HasErrors() || r.Get(KeyTheme).Value != "dark" {
		t.Fatalf("a file of exactly 1 MiB: %v, problems %v", err, r.Problems)
	}
	if f, err := Parse(sized(maxFileSize)); err != nil || f.Theme != "dark" {
		t.Fatalf("Parse of exactly 1 MiB: %v", err)
	}
	p = write(t, string(sized(maxFileSize+1)), 0o600)
	if _, err := Load(Inputs{Path: p, Getenv: env(nil), SystemPaths: []string{}}); err == nil ||
		!strings.Contains(err.Error(), "larger than 1 MiB") {
		t.Fatalf("a file of 1 MiB and a byte: %v", err)
	}
	if _, err := Parse(sized(maxFileSize + 1)); !errors.Is(err, errTooLarge) {
		t.Fatalf("Parse of 1 MiB and a byte: %v", err)
	}
}

// TestDisplay: how a setting's value may be shown — a secret never, a PostgreSQL URL
// without its password or query, an empty value as "(empty)".
func TestDisplay(t *testing.T) {
	for _, tc := range []struct {
		s    Setting
		want string
	}{
		{Setting{Value: "dark"}, "dark"},
		{Setting{}, "(empty)"},
		{Setting{Value: secret, Secret: true}, "(set, hidden)"},
		{Setting{Secret: true}, "(not set)"},
		{Setting{Invalid: true}, "(invalid: see the problems below)"},
		{Setting{Value: "postgres://steward:pw@db.example:5432/cp?sslmode=require&password=pw"}, "postgres://steward@db.example:5432/cp"},
		{Setting{Value: "postgresql://db.example/cp"}, "postgresql://db.example/cp"},
		{Setting{Value: "postgres://u:pw@db.example:port/cp"}, "postgres://(unparseable URL)"},
	} {
		if got := tc.s.Display(); got != tc.want {
			t.Errorf("%+v displays %q, want %q", tc.s, got, tc.want)
		}
	}
}

func TestMissingFileIsDefaults(t *testing.T) {
	r, err := Load(Inputs{Getenv: noConfig(t, map[string]string{"HOME": "/h"})})
	if err != nil {
		t.Fatal(err)
	}
	if r.Found || r.HasErrors() || r.Get(KeyTheme).Value != "auto" || r.Get(KeyLocksDir).Source != FromDefault {
		t.Fatalf("found %v, problems %v, theme %q", r.Found, r.Problems, r.Get(KeyTheme).Value)
	}
	if got := DefaultPath(env(map[string]string{"XDG_CONFIG_HOME": "/x"})); got != "/x/steward/config.yaml" {
		t.Fatalf("DefaultPath = %q", got)
	}
	// A file the person named (--config, STEWARD_CONFIG) must exist: a typo is an error.
	missing := filepath.Join(t.TempDir(), "none.yaml")
	for _, in := range []Inputs{{Path: missing, Getenv: env(nil)}, {Getenv: env(map[string]string{"STEWARD_CONFIG": missing})}} {
		if r, err := Load(in); err != nil || !has(codes(r), "config-missing") || !r.HasErrors() {
			t.Errorf("a named file that is not there: %v %v", err, r.Problems)
		}
	}
}

func TestWriteNewTemplate(t *testing.T) {
	p := filepath.Join(t.TempDir(), "sub", "config.yaml")
	if err := WriteNew(p, []byte(Template)); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(p)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, %v; want 0600", fi.Mode().Perm(), err)
	}
	if err := WriteNew(p, []byte("x")); !errors.Is(err, ErrExists) {
		t.Fatalf("second WriteNew: %v, want ErrExists", err)
	}
	r, err := Load(Inputs{Path: p, Getenv: env(map[string]string{"HOME": "/h"})})
	if err != nil {
		t.Fatal(err)
	}
	if r.HasErrors() {
		t.Fatalf("the template has errors: %v", r.Problems)
	}
	if got := r.Get(KeyLocksDir).Value; got != "/h/.cache/gitea-tools/issue-locks" {
		t.Fatalf("~ not expanded: %q", got)
	}
}

// db_host says which host the control-plane DB was written on: from the
// workspace in the file, overridden by STEWARD_DB_HOST and the flag; empty by default (this
// host, the seed's single-host model); a value that is no host name is an error.
func TestDBHost(t *testing.T) {
	p := write(t, "workspaces:\n  w:\n    db_host: cp-host.example\n", 0o600)
	r, err := Load(Inputs{Path: p, Getenv: env(nil)})
	if err != nil {
		t.Fatal(err)
	}
	if s := r.Get(KeyDBHost); s.Value != "cp-host.example" || s.Source != FromFile || s.Origin != "workspaces.w.db_host" {
		t.Errorf("db_host from the file: %+v", s)
	}
	r, _ = Load(Inputs{Path: p, Getenv: env(map[string]string{"STEWARD_DB_HOST": "env-host"}), Flags: map[string]string{KeyDBHost: "flag-host"}})
	if s := r.Get(KeyDBHost); s.Value != "flag-host" || s.Source != fromFlag {
		t.Errorf("db_host from the flag: %+v", s)
	}
	r, _ = Load(Inputs{Getenv: noConfig(t, nil)})
	if s := r.Get(KeyDBHost); s.Value != "" || s.Source != FromDefault {
		t.Errorf("db_host by default: %+v", s)
	}
	r, _ = Load(Inputs{Path: p, Getenv: env(map[string]string{"STEWARD_DB_HOST": "two words"})})
	if !has(codes(r), "bad-host") {
		t.Errorf("a db_host with a space: problems %v", r.Problems)
	}
}

// TestGiteaRemote: gitea.remote — the name the workers' records give the repository's remote
// (the seed's prgs) — from the workspace in the file, overridden by STEWARD_GITEA_REMOTE and
// the flag; empty by default (inferred from the DB's rows); the line config init writes,
// uncommented, reads; a value no git remote can have is an error, never a default.
func TestGiteaRemote(t *testing.T) {
	p := write(t, "workspaces:\n  w:\n    gitea:\n      owner: o\n      repo: r\n      remote: prgs\n", 0o600)
	r, err := Load(Inputs{Path: p, Getenv: env(nil)})
	if err != nil {
		t.Fatal(err)
	}
	if s := r.Get(KeyGiteaRemote); s.Value != "prgs" || s.Source != FromFile || s.Origin != "workspaces.w.gitea.remote" {
		t.Errorf("gitea.remote from the file: %+v", s)
	}
	r, _ = Load(Inputs{Path: p, Getenv: env(map[string]string{"STEWARD_GITEA_REMOTE": "origin"})})
	if s := r.Get(KeyGiteaRemote); s.Value != "origin" || s.Source != fromEnv {
		t.Errorf("gitea.remote from the variable: %+v", s)
	}
	r, _ = Load(Inputs{Path: p, Getenv: env(map[string]string{"STEWARD_GITEA_REMOTE": "origin"}), Flags: map[string]string{KeyGiteaRemote: "mdcps"}})
	if s := r.Get(KeyGiteaRemote); s.Value != "mdcps" || s.Source != fromFlag {
		t.Errorf("gitea.remote from the flag: %+v", s)
	}
	r, _ = Load(Inputs{Getenv: noConfig(t, nil)})
	if s := r.Get(KeyGiteaRemote); s.Value != "" || s.Source != FromDefault {
		t.Errorf("gitea.remote by default: %+v", s)
	}
	tmpl := strings.Replace(Template, "      # remote: prgs ", "      remote: prgs   ", 1)
	if tmpl == Template {
		t.Fatal("config init's template does not offer gitea.remote")
	}
	r, _ = Load(Inputs{Path: write(t, tmpl, 0o600), Getenv: env(nil)})
	if s := r.Get(KeyGiteaRemote); s.Value != "prgs" || r.HasErrors() {
		t.Errorf("the template's remote line, uncommented: %+v, problems %v", s, r.Problems)
	}
	for _, bad := range []string{"two words", "-x", ".hidden", "a\"b"} {
		r, _ = Load(Inputs{Path: p, Getenv: env(map[string]string{"STEWARD_GITEA_REMOTE": bad})})
		if !has(codes(r), "bad-remote") {
			t.Errorf("gitea.remote %q: problems %v", bad, r.Problems)
		}
	}
}

// TestDBURL: a workspace's db_url is its control-plane DB (shown with its origin), its
// password comes from a file, and a password put in the URL anyway — in the file, a
// flag or a variable — is refused and never shown or quoted.
func TestDBURL(t *testing.T) {
	p := write(t, "workspaces:\n  w:\n    db_url: postgres://steward@db.example:5432/cp\n    db_password_file: ~/pw\n", 0o600)
	r, err := Load(Inputs{Path: p, Getenv: env(map[string]string{"HOME": "/home/u"})})
	if err != nil {
		t.Fatal(err)
	}
	if s := r.Get(KeyDBPath); s.Value != "postgres://steward@db.example:5432/cp" || s.Origin != "workspaces.w.db_url" {
		t.Errorf("db from db_url: %+v", s)
	}
	if s := r.Get(KeyDBPasswordFile); s.Value != "/home/u/pw" || s.Origin != "workspaces.w.db_password_file" {
		t.Errorf("password file: %+v", s)
	}
	if r.HasErrors() {
		t.Errorf("problems %v", r.Problems)
	}
	const pw = "hunter2-secret-pw"
	for _, in := range []Inputs{
		{Path: p, Getenv: env(nil), Flags: map[string]string{KeyDBPath: "postgres://u:" + pw + "@h/d"}, FlagNames: map[string]string{KeyDBPath: "db"}},
		{Path: p, Getenv: env(map[string]string{"GITEA_CONTROL_PLANE_DB": "postgresql://u@h/d?sslmode=disable&password=" + pw})},
	} {
		r, err := Load(in)
		if err != nil {
			t.Fatal(err)
		}
		if !has(codes(r), "db-url") {
			t.Fatalf("a password in the URL: problems %v", r.Problems)
		}
		for _, s := range r.Shown() {
			if strings.Contains(s["value"], pw) {
				t.Fatalf("shown: %v", s)
			}
		}
		for _, pr := range r.Problems {
			if strings.Contains(pr.Message, pw) {
				t.Fatalf("problem quotes the password: %s", pr.Message)
			}
		}
	}
}
