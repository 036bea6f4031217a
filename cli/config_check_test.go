package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"steward/config"
	"steward/gitea/giteatest"
	"steward/govern"
)

// goodWorkspace is a workspace whose every path is what steward will use: a lock directory,
// a real control-plane SQLite file, a repository root with branches/, a place for the audit
// log.
func goodWorkspace(t *testing.T) (locks, db, repo, audit string) {
	t.Helper()
	dir := t.TempDir()
	ws := govern.Workspace{LocksDir: filepath.Join(dir, "locks"), DBPath: filepath.Join(dir, "db", "cp.sqlite3"), RepoRoot: filepath.Join(dir, "repo")}
	if err := govern.InitWorkspace(ws); err != nil {
		t.Fatal(err)
	}
	return ws.LocksDir, ws.DBPath, ws.RepoRoot, filepath.Join(dir, "state", "audit.jsonl")
}

type checkView struct {
	Settings []map[string]string `json:"settings"`
	Problems []config.Problem    `json:"problems"`
}

func configCheck(t *testing.T, body string, args ...string) (int, checkView, string) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := Main(append([]string{"config", "check", "--json", "--config", p}, args...), &out, &errb)
	var v checkView
	if err := json.Unmarshal(out.Bytes(), &v); err != nil {
		t.Fatalf("config check --json: %v\n%s%s", err, out.String(), errb.String())
	}
	return code, v, out.String()
}

func problemsOf(v checkView, sev config.Severity) map[string]string {
	out := map[string]string{}
	for _, p := range v.Problems {
		if p.Severity == sev {
			out[p.Code] += p.Message + "\n"
		}
	}
	return out
}

// TestConfigCheckChecksWhatWillBeUsed: config check exits 1 for paths that are not what
// steward will use — a locks_dir that does not exist, a db_path that is a directory or not a
// SQLite file, a repo_root that does not exist or has no branches/, an audit log that is a
// directory — listing every problem, not the first, with the other settings' origins intact
// (before, it exited 0 and `ui` then failed with "watch …: no such file or
// directory").
func TestConfigCheckChecksWhatWillBeUsed(t *testing.T) {
	locks, db, repo, audit := goodWorkspace(t)
	ws := func(l, d, r, a string) string {
		return "workspaces:\n  main:\n    locks_dir: " + l + "\n    db_path: " + d + "\n    repo_root: " + r + "\n    audit_log: " + a + "\n"
	}
	dir := t.TempDir()
	notSQLite := filepath.Join(dir, "notes.txt")
	noBranches := filepath.Join(dir, "bare-repo")
	for _, p := range []string{noBranches, filepath.Join(dir, "audit-dir")} {
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(notSQLite, []byte("not a database\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		body string
		want map[string]string // error code → a part of its message
	}{
		{name: "every path right", body: ws(locks, db, repo, audit)},
		{name: "locks_dir missing", body: ws(filepath.Join(dir, "nolocks"), db, repo, audit), want: map[string]string{"locks-dir": "no such file or directory"}},
		{name: "locks_dir a file", body: ws(notSQLite, db, repo, audit), want: map[string]string{"locks-dir": "is not a directory"}},
		{name: "db_path a directory", body: ws(locks, locks, repo, audit), want: map[string]string{"db-path": "is a directory, not a SQLite file"}},
		{name: "db_path not SQLite", body: ws(locks, notSQLite, repo, audit), want: map[string]string{"db-path": "is not a SQLite database"}},
		{name: "db_path missing", body: ws(locks, filepath.Join(dir, "none.sqlite3"), repo, audit), want: map[string]string{"db-path": "no such file or directory"}},
		{name: "repo_root missing", body: ws(locks, db, filepath.Join(dir, "norepo"), audit), want: map[string]string{"repo-root": "no such file or directory"}},
		{name: "repo_root without branches/", body: ws(locks, db, noBranches, audit), want: map[string]string{"repo-root": "has no branches/"}},
		{name: "audit_log a directory", body: ws(locks, db, repo, filepath.Join(dir, "audit-dir")), want: map[string]string{"audit-log": "is not a regular file"}},
		{name: "every problem at once", body: ws(filepath.Join(dir, "nolocks"), locks, filepath.Join(dir, "norepo"), audit) + "thresholds:\n  contention_window: 10x\n  stale_pr: 48h\n",
			want: map[string]string{"locks-dir": "nolocks", "db-path": "is a directory", "repo-root": "norepo", "parse": "thresholds.contention_window: line 8"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, v, out := configCheck(t, tc.body, "--offline")
			errs := problemsOf(v, config.SevError)
			if len(errs) != len(tc.want) {
				t.Errorf("errors %v, want exactly %v", errs, tc.want)
			}
			for c, part := range tc.want {
				if !strings.Contains(errs[c], part) {
					t.Errorf("error %s = %q, want it to say %q", c, errs[c], part)
				}
			}
			if want := map[bool]int{true: ExitOK, false: ExitError}[len(tc.want) == 0]; code != want {
				t.Errorf("exit %d, want %d\n%s", code, want, out)
			}
			// The other settings keep their origins.
			for _, s := range v.Settings {
				if (s["key"] == "locks_dir" || s["key"] == "db_path" || s["key"] == "repo_root" || s["key"] == "thresholds.stale_pr" && strings.Contains(tc.body, "stale_pr")) &&
					(s["source"] != "file" || !strings.HasPrefix(s["origin"], "workspaces.main.") && s["origin"] != "thresholds.stale_pr") {
					t.Errorf("setting %v lost its origin", s)
				}
			}
		})
	}
}

// TestConfigCheckGiteaLogin: the Gitea login must resolve (a tea login by name) and the
// server must accept its token — checked against a real Gitea.
func TestConfigCheckGiteaLogin(t *testing.T) {
	locks, db, repo, audit := goodWorkspace(t)
	srv := giteatest.Shared(t)
	name := srv.NewRepo(t, "cfgcheck")
	base := "workspaces:\n  main:\n    locks_dir: " + locks + "\n    db_path: " + db + "\n    repo_root: " + repo + "\n    audit_log: " + audit + "\n"
	tokenFile := func(tok string) string {
		p := filepath.Join(t.TempDir(), "token")
		if err := os.WriteFile(p, []byte(tok+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name, gitea, code string
		args              []string
	}{
		{name: "token accepted", gitea: "url: " + srv.URL + ", token_file: " + tokenFile(srv.WorkerToken) + ", owner: " + srv.Admin + ", repo: " + name},
		{name: "token refused", gitea: "url: " + srv.URL + ", token_file: " + tokenFile("0000000000000000000000000000000000000000") + ", owner: " + srv.Admin + ", repo: " + name, code: "gitea-unreachable"},
		{name: "token refused, offline", gitea: "url: " + srv.URL + ", token_file: " + tokenFile("0000000000000000000000000000000000000000") + ", owner: " + srv.Admin + ", repo: " + name, args: []string{"--offline"}},
		{name: "no such tea login", gitea: "tea_login: nosuch, owner: " + srv.Admin + ", repo: " + name, code: "gitea-login", args: []string{"--offline"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("XDG_CONFIG_HOME", t.TempDir()) // no tea config
			code, v, out := configCheck(t, base+"    gitea: {"+tc.gitea+"}\n", tc.args...)
			errs := problemsOf(v, config.SevError)
			if tc.code == "" && (len(errs) != 0 || code != ExitOK) || tc.code != "" && (errs[tc.code] == "" || len(errs) != 1 || code != ExitError) {
				t.Fatalf("exit %d, errors %v, want %q\n%s", code, errs, tc.code, out)
			}
			if strings.Contains(out, srv.WorkerToken) {
				t.Fatal("config check printed the token")
			}
		})
	}
}
