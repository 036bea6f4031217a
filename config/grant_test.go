package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The configured grant is a ceiling: a flag or variable may lower the
// role or turn read-only on, never the reverse; a system file bounds every user file,
// variable and flag. The command-line regression is cli.TestGrantIsACeiling.
func TestGrantCeiling(t *testing.T) {
	for _, tc := range []struct {
		name        string
		system      string // a system file's body ("" = none)
		system2     string // a second one's (STEWARD_SYSTEM_CONFIG's)
		user        string // the user's config file ("" = none)
		env         map[string]string
		flags       map[string]string
		flagNames   map[string]string
		login       string
		role        string
		roleSrc     Source
		origin      string // a part of the role's origin (what the role-capped warning names)
		readOnly    bool
		roSrc       Source
		roOrigin    string // what turned read-only on (ReadOnlyReason names it)
		wantProblem string
	}{
		{name: "nothing configured: the flag's role", flags: map[string]string{KeyRole: "admin"}, role: "admin", roleSrc: fromFlag},
		{name: "nothing at all: viewer", role: "viewer", roleSrc: FromDefault},
		{name: "the file's grant without a flag", user: "roles: {alice: operator}\n", login: "alice", role: "operator", roleSrc: FromFile},
		{name: "a flag above the grant is capped", user: "roles: {alice: operator}\n", login: "alice", flags: map[string]string{KeyRole: "admin"},
			role: "operator", roleSrc: FromFile, wantProblem: "role-capped"},
		{name: "a variable above the grant is capped", user: "roles: {alice: operator}\n", login: "alice", env: map[string]string{"STEWARD_ROLE": "controller"},
			role: "operator", roleSrc: FromFile, wantProblem: "role-capped"},
		{name: "a flag may lower", user: "roles: {alice: controller}\n", login: "alice", flags: map[string]string{KeyRole: "viewer"}, role: "viewer", roleSrc: fromFlag},
		{name: "logins compare without case", user: "roles: {Alice: operator}\n", login: "alice", flags: map[string]string{KeyRole: "admin"}, role: "operator", roleSrc: FromFile, wantProblem: "role-capped"},
		{name: "a login the map does not name: viewer", user: "roles: {bob: admin}\n", login: "alice", flags: map[string]string{KeyRole: "admin"}, role: "viewer", roleSrc: FromFile,
			origin: "maps roles and grants login alice none: viewer", wantProblem: "role-capped"},
		{name: "no login with a roles map: viewer", user: "roles: {bob: admin}\n", flags: map[string]string{KeyRole: "operator"}, role: "viewer", roleSrc: FromFile,
			origin: "maps roles and grants no login (give --login or STEWARD_GITEA_LOGIN) none: viewer", wantProblem: "role-capped"},
		{name: "star grants the others", user: "roles: {'*': operator, bob: admin}\n", login: "alice", flags: map[string]string{KeyRole: "admin"}, role: "operator", roleSrc: FromFile, wantProblem: "role-capped"},
		{name: "the system file bounds the user's", system: "roles: {alice: operator}\n", user: "roles: {alice: admin}\n", login: "alice", role: "operator", roleSrc: fromSystem},
		{name: "the system file bounds a flag", system: "roles: {alice: operator}\n", login: "alice", flags: map[string]string{KeyRole: "admin"}, role: "operator", roleSrc: fromSystem, wantProblem: "role-capped"},
		{name: "the system file denies by default", system: "roles: {bob: admin}\n", user: "roles: {alice: admin}\n", login: "alice", role: "viewer", roleSrc: fromSystem},
		{name: "the user's file may be stricter", system: "roles: {alice: admin}\n", user: "roles: {alice: operator}\n", login: "alice", role: "operator", roleSrc: FromFile},
		{name: "the same grant in both: the system file's", system: "roles: {alice: operator}\n", user: "roles: {alice: operator}\n", login: "alice",
			role: "operator", roleSrc: fromSystem, origin: "roles.alice in the system config "},

		{name: "read-only off by default", role: "viewer", roleSrc: FromDefault},
		{name: "a flag turns it on", flags: map[string]string{KeyReadOnly: "true"}, role: "viewer", roleSrc: FromDefault, readOnly: true, roSrc: fromFlag,
			roOrigin: "--read-only"},
		{name: "the flag named as given", flags: map[string]string{KeyReadOnly: "true"}, flagNames: map[string]string{KeyReadOnly: "ro"}, role: "viewer",
			roleSrc: FromDefault, readOnly: true, roSrc: fromFlag, roOrigin: "--ro"},
		{name: "a variable turns it on", env: map[string]string{"STEWARD_READ_ONLY": "true"}, role: "viewer", roleSrc: FromDefault, readOnly: true, roSrc: fromEnv},
		{name: "a flag cannot lift the file's", user: "read_only: true\n", flags: map[string]string{KeyReadOnly: "false"}, role: "viewer", roleSrc: FromDefault,
			readOnly: true, roSrc: FromFile, wantProblem: "read-only-locked"},
		{name: "a variable cannot lift the file's", user: "read_only: true\n", env: map[string]string{"STEWARD_READ_ONLY": "false"}, role: "viewer", roleSrc: FromDefault,
			readOnly: true, roSrc: FromFile, wantProblem: "read-only-locked"},
		{name: "nothing lifts the system's", system: "read_only: true\n", user: "read_only: false\n", env: map[string]string{"STEWARD_READ_ONLY": "false"},
			flags: map[string]string{KeyReadOnly: "false"}, role: "viewer", roleSrc: FromDefault, readOnly: true, roSrc: fromSystem, wantProblem: "read-only-locked"},
		// Two system files are of one authority: the second's false lifts nothing, and is not
		// read as a user's attempt to.
		{name: "two system files: the first's true holds, no warning", system: "read_only: true\n", system2: "read_only: false\n", role: "viewer", roleSrc: FromDefault,
			readOnly: true, roSrc: fromSystem},
		{name: "a variable that is not a bool names itself", env: map[string]string{"STEWARD_READ_ONLY": "maybe"}, role: "viewer", roleSrc: FromDefault, wantProblem: "bad-bool"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := Inputs{Getenv: noConfig(t, tc.env), Flags: tc.flags, FlagNames: tc.flagNames, Login: tc.login, SystemPaths: []string{}}
			if tc.user != "" {
				in.Path = write(t, tc.user, 0o600)
			}
			if tc.system != "" {
				in.SystemPaths = []string{write(t, tc.system, 0o644)}
			}
			if tc.system2 != "" {
				in.SystemPaths = append(in.SystemPaths, write(t, tc.system2, 0o644))
			}
			r, err := Load(in)
			if err != nil {
				t.Fatal(err)
			}
			g := r.Grant
			if g.Role != tc.role || g.RoleSource != tc.roleSrc || g.ReadOnly != tc.readOnly || g.ReadOnlySource != tc.roSrc {
				t.Fatalf("grant %+v\nwant role %s from %s, read-only %v from %q", g, tc.role, tc.roleSrc, tc.readOnly, tc.roSrc)
			}
			if s := r.Get(KeyRole); s.Value != g.Role || s.Source != g.RoleSource {
				t.Errorf("the role setting %+v disagrees with the grant", s)
			}
			if s := r.Get(KeyReadOnly); tc.wantProblem != "bad-bool" && s.Value != map[bool]string{true: "true", false: "false"}[g.ReadOnly] {
				t.Errorf("the read_only setting %+v disagrees with the grant", s)
			}
			// A value that is no bool is shown as given, beside its error: never as "false".
			if s := r.Get(KeyReadOnly); tc.wantProblem == "bad-bool" && (s.Value != tc.env["STEWARD_READ_ONLY"] || s.Source != fromEnv) {
				t.Errorf("the bad read_only setting shows as %+v", s)
			}
			if !strings.Contains(g.RoleOrigin, tc.origin) || tc.roOrigin != "" && g.ReadOnlyOrigin != tc.roOrigin {
				t.Errorf("role from %q, read-only from %q; want %q, %q", g.RoleOrigin, g.ReadOnlyOrigin, tc.origin, tc.roOrigin)
			}
			if tc.wantProblem != "" && !has(codes(r), tc.wantProblem) {
				t.Errorf("problems %v, want %s", r.Problems, tc.wantProblem)
			}
			if tc.wantProblem == "" && len(r.Problems) > 0 && !onlyGiteaWarnings(r) {
				t.Errorf("unexpected problems %v", r.Problems)
			}
			if g.ReadOnly && !strings.Contains(g.ReadOnlyReason(), "set by") {
				t.Errorf("reason %q", g.ReadOnlyReason())
			}
		})
	}
}

func onlyGiteaWarnings(r *Resolved) bool {
	for _, p := range r.Problems {
		if p.Code != "gitea-none" && p.Code != "gitea-repo" {
			return false
		}
	}
	return true
}

// The error for a bad STEWARD_READ_ONLY names the variable — not a config file that does
// not exist — and shows no Go internals (defect 12).
func TestBadReadOnlyNamesItsSource(t *testing.T) {
	r, err := Load(Inputs{Getenv: noConfig(t, map[string]string{"STEWARD_READ_ONLY": "maybe"}), SystemPaths: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	var msg string
	for _, p := range r.Problems {
		if p.Code == "bad-bool" {
			msg = p.Message
		}
	}
	if !strings.Contains(msg, "STEWARD_READ_ONLY") || !strings.Contains(msg, "true or false") || strings.Contains(msg, "none.yaml") || strings.Contains(msg, "strconv") {
		t.Fatalf("message %q", msg)
	}
}

// STEWARD_SYSTEM_CONFIG adds a system file; it never replaces SystemPath, so pointing it
// at a permissive file takes nothing away (a user cannot use it to loosen).
func TestSystemConfigVariableOnlyAdds(t *testing.T) {
	strict := write(t, "read_only: true\nroles: {alice: operator}\n", 0o644)
	loose := write(t, "read_only: false\nroles: {alice: admin}\n", 0o644)
	defer func(p string) { SystemPath = p }(SystemPath)
	SystemPath = strict
	r, err := Load(Inputs{Login: "alice", Flags: map[string]string{KeyRole: "admin", KeyReadOnly: "false"},
		Getenv: noConfig(t, map[string]string{envSystemConfig: loose})})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.System) != 2 || r.System[0].Path != strict || r.System[1].Path != loose {
		t.Fatalf("system files %+v", r.System)
	}
	if g := r.Grant; !g.ReadOnly || g.ReadOnlySource != fromSystem || g.Role != "operator" || !strings.Contains(g.ReadOnlyOrigin, strict) {
		t.Fatalf("grant %+v", g)
	}
	// And the variable does add: a stricter file named by it applies.
	SystemPath = filepath.Join(t.TempDir(), "absent.yaml")
	r, _ = Load(Inputs{Getenv: noConfig(t, map[string]string{envSystemConfig: strict})})
	if !r.Grant.ReadOnly {
		t.Fatalf("the variable's file did not apply: %+v", r.Grant)
	}
}

// A system file steward cannot read, or one holding anything but ceilings, stops it (fail
// closed); one that others can write still applies, with a warning.
func TestSystemConfigProblems(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, body string
		mode       os.FileMode
		want       string
		sev        Severity
	}{
		{"a workspace in it", "workspaces: {w: {}}\n", 0o644, "system-config", SevError},
		{"a bad role", "roles: {alice: root}\n", 0o644, "system-config", SevError},
		{"not YAML", "read_only: [\n", 0o644, "system-config", SevError},
		{"writable by others", "read_only: true\n", 0o666, "system-config-permissions", sevWarning},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := write(t, tc.body, tc.mode)
			r, err := Load(Inputs{Getenv: noConfig(t, nil), SystemPaths: []string{p}})
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, pr := range r.Problems {
				if pr.Code == tc.want && pr.Severity == tc.sev && strings.Contains(pr.Message, p) {
					found = true
				}
				if strings.Contains(pr.Message, "config.SystemFile") || strings.Contains(pr.Message, "!!") {
					t.Errorf("Go internals in %q", pr.Message)
				}
			}
			if !found {
				t.Fatalf("problems %v, want %s %s naming %s", r.Problems, tc.sev, tc.want, p)
			}
		})
	}
	// A directory where the file should be cannot be read: an error, not "absent".
	d := filepath.Join(dir, "sys.yaml")
	if err := os.Mkdir(d, 0o755); err != nil {
		t.Fatal(err)
	}
	r, err := Load(Inputs{Getenv: noConfig(t, nil), SystemPaths: []string{d}})
	if err != nil || !has(codes(r), "system-config") || !r.HasErrors() {
		t.Fatalf("unreadable system file: %v %v", err, r.Problems)
	}
	// Protected is the file and its folder owned by root and writable by no one else: a
	// folder others can write lets them replace the file. A file named relative to the
	// working directory is in that folder (not in /, as it was read before).
	for _, tc := range []struct {
		name      string
		dirMode   os.FileMode
		relative  bool
		protected bool
	}{
		{"in a folder only root writes", 0o755, false, true},
		{"in a folder others can write", 0o777, false, false},
		{"named relative, in a folder only root writes", 0o755, true, true},
		{"named relative, in a folder others can write", 0o777, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sys := filepath.Join(t.TempDir(), "sys")
			if err := os.Mkdir(sys, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(sys, "config.yaml"), []byte("read_only: true\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(sys, tc.dirMode); err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(sys, "config.yaml")
			if tc.relative {
				t.Chdir(sys)
				p = "config.yaml"
			}
			r, err := Load(Inputs{Getenv: noConfig(t, nil), SystemPaths: []string{p}})
			if err != nil {
				t.Fatal(err)
			}
			warned := has(codes(r), "system-config-permissions")
			if len(r.System) != 1 || r.System[0].Protected != tc.protected || warned == tc.protected || !r.Grant.ReadOnly {
				t.Fatalf("system files %+v, problems %v; want protected %v (and read-only either way)", r.System, r.Problems, tc.protected)
			}
		})
	}
	// An absent one is fine.
	r, _ = Load(Inputs{Getenv: noConfig(t, nil), SystemPaths: []string{filepath.Join(dir, "absent.yaml")}})
	if r.HasErrors() || len(r.System) != 1 || r.System[0].Found {
		t.Fatalf("absent system file: %+v %v", r.System, r.Problems)
	}
}
