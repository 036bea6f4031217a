package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeFile writes body at dir/name and returns its path.
func writeFile(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// The configured grant is a ceiling: --as-role above the login's
// configured role, --read-only=false against read_only: true, and anything a user sets
// against a system file, all lose. On the code before the fix each of these previews said
// "allowed" (exit 0).
func TestGrantIsACeiling(t *testing.T) {
	ws := cliWorkspace(t)
	dir := t.TempDir()
	t.Setenv("STEWARD_ROLE", "")
	t.Setenv("STEWARD_READ_ONLY", "")
	t.Setenv("STEWARD_SYSTEM_CONFIG", "")
	reclaim := append([]string{"lease", "reclaim-expired", "--lease", "L1", "--dry-run"}, ws...)
	for _, tc := range []struct {
		name   string
		user   string // the user's config file
		system string // a system file added through STEWARD_SYSTEM_CONFIG ("" = none)
		env    map[string]string
		args   []string
		code   int
		want   []string
	}{
		{name: "the flag alone still works when nothing is configured", args: []string{"--as-role", "operator"}, code: ExitOK, want: []string{"allowed"}},
		{name: "--as-role above the configured role", user: "roles: {maint: viewer}\n", args: []string{"--login", "maint", "--as-role", "admin"},
			code: ExitRefused, want: []string{"role_too_low", "warning", "roles.maint"}},
		{name: "STEWARD_ROLE above the configured role", user: "roles: {maint: viewer}\n", env: map[string]string{"STEWARD_ROLE": "admin"},
			args: []string{"--login", "maint"}, code: ExitRefused, want: []string{"role_too_low"}},
		{name: "a login the roles map does not name", user: "roles: {alice: admin}\n", args: []string{"--login", "mallory", "--as-role", "admin"},
			code: ExitRefused, want: []string{"role_too_low"}},
		{name: "--read-only=false against the file", user: "read_only: true\n", args: []string{"--as-role", "operator", "--read-only=false"},
			code: ExitRefused, want: []string{"read_only", "read_only: true in the config file", "cannot lift"}},
		{name: "STEWARD_READ_ONLY=false against the file", user: "read_only: true\n", env: map[string]string{"STEWARD_READ_ONLY": "false"},
			args: []string{"--as-role", "operator"}, code: ExitRefused, want: []string{"read_only"}},
		{name: "nothing lifts the system file's read_only", user: "read_only: false\nroles: {maint: admin}\n", system: "read_only: true\n",
			env: map[string]string{"STEWARD_READ_ONLY": "false"}, args: []string{"--login", "maint", "--read-only=false"},
			code: ExitRefused, want: []string{"read_only", "the system config", "only the owner of that file"}},
		{name: "the system file's roles bound the user's", user: "roles: {maint: admin}\n", system: "roles: {maint: viewer}\n",
			args: []string{"--login", "maint", "--as-role", "admin"}, code: ExitRefused, want: []string{"role_too_low"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := writeFile(t, t.TempDir(), "config.yaml", tc.user)
			if tc.system != "" {
				t.Setenv("STEWARD_SYSTEM_CONFIG", writeFile(t, dir, "system-"+strings.ReplaceAll(tc.name, " ", "-")+".yaml", tc.system))
			}
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			code, out := run(t, append(append(append([]string{}, reclaim...), "--config", cfg), tc.args...)...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\n%s", code, tc.code, out)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}
}

// In read-only mode nothing is created or appended: not the audit log, not its folder,
// not an in-flight marker; the refusal is printed (defect 9). Before the fix the audit log
// (and its folder) was created and the refusal recorded in it.
func TestReadOnlyCreatesNothing(t *testing.T) {
	ws := cliWorkspace(t)
	dir := t.TempDir()
	auditDir := filepath.Join(dir, "state", "steward")
	ws[len(ws)-1] = filepath.Join(auditDir, "audit.jsonl")
	cfg := emptyConfig(t, dir)
	t.Setenv("STEWARD_SYSTEM_CONFIG", "")
	for _, args := range [][]string{
		{"lease", "reclaim-expired", "--lease", "L1", "--as-role", "operator", "--read-only"},
		{"lease", "expire-sweep", "--as-role", "operator", "--read-only"},
		{"audit", "verify", "--as-role", "operator", "--read-only"},
		{"audit", "resolve", "--attempt", "att-x", "--result", "failed", "--as-role", "operator", "--read-only"},
	} {
		code, out := run(t, append(append(args, ws...), "--config", cfg)...)
		if code == ExitOK && args[0] != "audit" {
			t.Fatalf("%v: exit 0 in read-only\n%s", args, out)
		}
		if args[0] == "lease" && (!strings.Contains(out, "read_only") || !strings.Contains(out, "not recorded")) {
			t.Errorf("%v: the refusal is not printed:\n%s", args, out)
		}
		if _, err := os.Stat(filepath.Join(dir, "state")); !os.IsNotExist(err) {
			t.Fatalf("%v: read-only created %s (%v)\n%s", args, filepath.Join(dir, "state"), err, out)
		}
	}
	// With an existing log: not one byte is appended.
	if err := os.MkdirAll(auditDir, 0o700); err != nil {
		t.Fatal(err)
	}
	writeFile(t, auditDir, "audit.jsonl", "")
	code, out := run(t, append(append([]string{"lease", "reclaim-expired", "--lease", "L1", "--as-role", "operator", "--read-only"}, ws...), "--config", cfg)...)
	if b, _ := os.ReadFile(ws[len(ws)-1]); code != ExitRefused || len(b) != 0 {
		t.Fatalf("exit %d, audit log %q\n%s", code, b, out)
	}
	if ents, _ := os.ReadDir(auditDir); len(ents) != 1 {
		t.Fatalf("files beside the log: %v", ents)
	}
}

// Every unparsable value is an error naming the flag, the value and what is accepted —
// never "no pid", a parser's words or a layout string (defect 12).
func TestBadValuesSayWhatIsAccepted(t *testing.T) {
	ws := cliWorkspace(t)
	cfg := emptyConfig(t, t.TempDir())
	t.Setenv("STEWARD_SYSTEM_CONFIG", "")
	claim := []string{"claim", "--org", "acme", "--repo", "widgets", "--number", "5", "--session", "s9", "--as-role", "operator", "--dry-run"}
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{args: append(claim, "--pid", "abc"), want: `--pid "abc" is not a process id`},
		{args: append(claim, "--pid", "-4"), want: `--pid "-4" is not a process id`},
		{args: append(claim, "--ttl", "5x"), want: `--ttl "5x" is not a positive duration`},
		{args: []string{"claim", "--org", "a", "--repo", "b", "--number", "five", "--session", "s"}, want: `--number "five" is not an issue or PR number`},
		{args: []string{"status", "--read-only=maybe"}, want: `--read-only "maybe" is not true or false`},
		{args: []string{"status", "--now", "yesterday"}, want: `--now "yesterday" is not a time: use RFC 3339`},
		{args: []string{"demo", "--headless", "--workers", "many"}, want: `--workers "many": want a positive number of workers`},
		{args: []string{"demo", "--headless", "--issues", "lots"}, want: `--issues "lots" is not a whole number`},
		{args: []string{"demo", "--headless", "--speed", "fast"}, want: `--speed "fast" is not a number`},
		{args: []string{"demo", "--headless", "--for", "5x"}, want: `--for "5x" is not a duration`},
		{args: []string{"status"}, env: map[string]string{"STEWARD_READ_ONLY": "maybe"}, want: `STEWARD_READ_ONLY is "maybe": use true or false`},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			code, out := run(t, append(append(tc.args, ws...), "--config", cfg)...)
			if code != ExitError || !strings.Contains(out, tc.want) {
				t.Fatalf("exit %d, want %d and %q:\n%s", code, ExitError, tc.want, out)
			}
			for _, bad := range []string{"strconv", "Parse", "invalid syntax", "2006-01-02", "parsing time", "the config file"} {
				if strings.Contains(out, bad) {
					t.Errorf("Go internals or a wrong source (%q) in:\n%s", bad, out)
				}
			}
		})
	}
}

// demo --gitea-token puts the token on the command line: it is deprecated and warned
// about; --gitea-token-file and $STEWARD_GITEA_TOKEN keep it off (defect 12). No message
// quotes the token.
func TestDemoTokenOffTheCommandLine(t *testing.T) {
	const tok = "tok-demo-0123456789abcdef"
	dir := t.TempDir()
	cfg := emptyConfig(t, dir)
	t.Setenv("STEWARD_SYSTEM_CONFIG", "")
	t.Setenv("STEWARD_GITEA_TOKEN", "")
	tf := writeFile(t, dir, "token", tok+"\n")
	dead := "http://127.0.0.1:1" // nothing listens: the demo stops after reading the token
	for _, tc := range []struct {
		name string
		args []string
		warn bool
		want string
	}{
		{"the flag warns", []string{"--gitea-token", tok}, true, ""},
		{"the file does not", []string{"--gitea-token-file", tf}, false, ""},
		{"an absent file is named", []string{"--gitea-token-file", filepath.Join(dir, "nope")}, false, "cannot be read (no such file or directory)"},
		{"no token at all", nil, false, "--gitea-url needs a token"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := Main(append([]string{"demo", "--headless", "--for", "1s", "--gitea-url", dead, "--config", cfg}, tc.args...), &out, &errb)
			text := out.String() + errb.String()
			if code == ExitOK {
				t.Fatalf("a demo on a dead Gitea succeeded:\n%s", text)
			}
			if got := strings.Contains(errb.String(), "warning: --gitea-token puts the token on the command line"); got != tc.warn {
				t.Fatalf("warning %v, want %v:\n%s", got, tc.warn, text)
			}
			if tc.want != "" && !strings.Contains(text, tc.want) {
				t.Fatalf("want %q in:\n%s", tc.want, text)
			}
			if tc.name != "the flag warns" && strings.Contains(text, "is not a") {
				t.Fatalf("a flag was refused:\n%s", text)
			}
			if strings.Contains(text, tok) {
				t.Fatalf("the token was printed:\n%s", text)
			}
		})
	}
}
