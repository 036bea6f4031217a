package config

import (
	"strings"
	"testing"
)

const twoWorkspaces = `default_workspace: a
workspaces:
  a:
    locks_dir: /srv/a/locks
    db_path: /srv/a/cp.sqlite3
  b:
    locks_dir: /srv/b/locks
    db_url: postgres://steward@cp-db/steward
    host: build-02
`

// TestWorkspaceListProblems: the list of workspaces is checked as a whole, like the
// single-workspace keys.
func TestWorkspaceListProblems(t *testing.T) {
	for _, tc := range []struct {
		name, body, want string
	}{
		{"a name listed twice", "default_workspace: a\nworkspaces:\n  a: {locks_dir: /a, db_path: /a.db}\n  a: {locks_dir: /b, db_path: /b.db}\n", "workspace-duplicate"},
		{"no lock directory", "default_workspace: a\nworkspaces:\n  a: {locks_dir: /a, db_path: /a.db}\n  b: {db_path: /b.db}\n", "workspace-incomplete"},
		{"no DB", "default_workspace: a\nworkspaces:\n  a: {locks_dir: /a, db_path: /a.db}\n  b: {locks_dir: /b}\n", "workspace-incomplete"},
		{"the name all", "default_workspace: a\nworkspaces:\n  a: {locks_dir: /a, db_path: /a.db}\n  all: {locks_dir: /b, db_path: /b.db}\n", "workspace-name"},
		{"a name with a space", "workspaces:\n  'a b': {locks_dir: /a, db_path: /a.db}\n", "workspace-name"},
		{"one lock directory twice", "default_workspace: a\nworkspaces:\n  a: {locks_dir: /x, db_path: /a.db}\n  b: {locks_dir: /x/, db_path: /b.db}\n", "workspace-shared-locks"},
		{"a host that is no host name", "workspaces:\n  a: {locks_dir: /a, db_path: /a.db, host: 'no such/host'}\n", "bad-host"},
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
	// The same lock directory on two hosts is two directories.
	ok := "default_workspace: a\nworkspaces:\n  a: {locks_dir: /x, db_path: /a.db}\n  b: {locks_dir: /x, db_path: /b.db, host: other}\n"
	r, err := Load(Inputs{Path: write(t, ok, 0o600), Getenv: env(nil)})
	if err != nil {
		t.Fatal(err)
	}
	if r.HasErrors() {
		t.Fatalf("one path on two hosts: %v", r.Problems)
	}
}

// TestLoadAll: every workspace of the file, the default first; the workspace settings of
// flags and variables go to the default workspace only, the shared settings to all.
func TestLoadAll(t *testing.T) {
	p := write(t, twoWorkspaces, 0o600)
	vars := env(map[string]string{"STEWARD_REPO_ROOT": "/env/repo", "STEWARD_STALE_PR": "5h"})
	all, err := LoadAll(Inputs{Path: p, Getenv: vars, Flags: map[string]string{KeyLocksDir: "/flag/locks"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 2 || all[0].Name() != "a" || all[1].Name() != "b" {
		t.Fatalf("workspaces %v", names(all))
	}
	a, b := all[0], all[1]
	for _, r := range all {
		if r.HasErrors() {
			t.Fatalf("%s: %v", r.Name(), r.Problems)
		}
		if v := r.Get(KeyStalePR).Value; v != "5h" {
			t.Errorf("%s: a shared setting from the environment reads %q", r.Name(), v)
		}
	}
	if a.Get(KeyLocksDir).Value != "/flag/locks" || a.Get(KeyRepoRoot).Value != "/env/repo" {
		t.Errorf("the default workspace lost the flag or variable: %s, %s", a.Get(KeyLocksDir).Value, a.Get(KeyRepoRoot).Value)
	}
	if b.Get(KeyLocksDir).Value != "/srv/b/locks" || b.Get(KeyRepoRoot).Source != FromDefault {
		t.Errorf("another workspace took the default's flag or variable: %s, %s from %s", b.Get(KeyLocksDir).Value, b.Get(KeyRepoRoot).Value, b.Get(KeyRepoRoot).Source)
	}
	if b.Get(KeyHost).Value != "build-02" || b.Get(KeyHost).Origin != "workspaces.b.host" || a.Get(KeyHost).Value != "" {
		t.Errorf("host: a %q, b %q (%s)", a.Get(KeyHost).Value, b.Get(KeyHost).Value, b.Get(KeyHost).Origin)
	}
	if !strings.HasPrefix(b.Get(KeyDBPath).Value, "postgres://") {
		t.Errorf("b's DB: %s", b.Get(KeyDBPath).Display())
	}
	// --workspace b makes b the default: first, with the flags.
	all, err = LoadAll(Inputs{Path: p, Getenv: vars, Workspace: "b", Flags: map[string]string{KeyLocksDir: "/flag/locks"}})
	if err != nil {
		t.Fatal(err)
	}
	if names(all) != "b,a" || all[0].Get(KeyLocksDir).Value != "/flag/locks" || all[1].Get(KeyLocksDir).Value != "/srv/a/locks" {
		t.Fatalf("--workspace b: %s, locks %s / %s", names(all), all[0].Get(KeyLocksDir).Value, all[1].Get(KeyLocksDir).Value)
	}
	// No default: every workspace from the file, and a warning that the flag applied to none.
	nodef := strings.Replace(twoWorkspaces, "default_workspace: a\n", "", 1)
	all, err = LoadAll(Inputs{Path: write(t, nodef, 0o600), Getenv: vars, Flags: map[string]string{KeyLocksDir: "/flag/locks"}})
	if err != nil {
		t.Fatal(err)
	}
	if names(all) != "a,b" || all[0].Get(KeyLocksDir).Value != "/srv/a/locks" || !has(codes(all[0]), "workspace-flags") || all[0].HasErrors() {
		t.Fatalf("no default: %s, locks %s, problems %v", names(all), all[0].Get(KeyLocksDir).Value, all[0].Problems)
	}
	// The warning names each flag and variable of a workspace setting that is set (an empty
	// variable sets nothing), and none of a shared setting.
	for _, r := range all {
		if msg := message(r, "workspace-flags"); !strings.HasPrefix(msg, "--locks_dir, STEWARD_REPO_ROOT set one workspace's settings") {
			t.Errorf("%s: %q", r.Name(), msg)
		}
	}
	vars2 := env(map[string]string{"STEWARD_STALE_PR": "5h", "STEWARD_DB_HOST": ""})
	all, err = LoadAll(Inputs{Path: write(t, nodef, 0o600), Getenv: vars2, Flags: map[string]string{KeyTheme: "dark"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range all {
		if has(codes(r), "workspace-flags") {
			t.Errorf("%s: a warning with no workspace setting given: %v", r.Name(), r.Problems)
		}
	}
	// A --workspace or default_workspace the file does not list is the error of the one
	// result, never the other workspaces without it (with several, LoadAll returned them all
	// and dropped the error).
	for _, tc := range []struct{ body, ws string }{
		{"workspaces: {a: {locks_dir: /a}}\n", "b"},
		{twoWorkspaces, "x"},
		{strings.Replace(twoWorkspaces, "default_workspace: a", "default_workspace: x", 1), ""},
	} {
		all, err = LoadAll(Inputs{Path: write(t, tc.body, 0o600), Getenv: vars, Workspace: tc.ws})
		if err != nil {
			t.Fatal(err)
		}
		if len(all) != 1 || !has(codes(all[0]), "workspace-unknown") || !all[0].HasErrors() {
			t.Errorf("workspace %q of a file listing %v: %s, problems %v", tc.ws, all[0].Names, names(all), all[0].Problems)
		}
	}
	// A file with no workspaces: the one workspace, named default.
	all, err = LoadAll(Inputs{Path: write(t, "theme: dark\n", 0o600), Getenv: vars})
	if err != nil {
		t.Fatal(err)
	}
	if names(all) != "default" {
		t.Fatalf("no workspaces: %s", names(all))
	}
}

func names(rs []*Resolved) string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Name())
	}
	return strings.Join(out, ",")
}
