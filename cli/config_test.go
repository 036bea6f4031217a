package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const cfgSecret = "tok-9f8e7d6c5b4a39281706"

func TestConfigCheckSaysWhereFromAndHidesToken(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "config.yaml")
	body := "workspaces:\n  w:\n    locks_dir: /file/locks\n    gitea: {url: 'http://g.test', token: " + cfgSecret + ", owner: o, repo: r}\ntheme: neon\n"
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GITEA_CONTROL_PLANE_DB", "/env/db.sqlite3")
	var out, errb bytes.Buffer
	code := Main([]string{"config", "check", "--config", p, "--repo-root", "/flag/repo"}, &out, &errb)
	text := out.String()
	if code != ExitError {
		t.Fatalf("exit %d, want %d for a bad theme\n%s%s", code, ExitError, text, errb.String())
	}
	for _, want := range []string{"/file/locks", "file", "/env/db.sqlite3", "GITEA_CONTROL_PLANE_DB", "/flag/repo", "--repo-root", "(set, hidden)", "bad-theme", "config-permissions"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text+errb.String(), cfgSecret) {
		t.Fatalf("config check printed the token:\n%s", text)
	}
	out.Reset()
	Main([]string{"config", "check", "--config", p, "--json"}, &out, &errb)
	if strings.Contains(out.String(), cfgSecret) {
		t.Fatal("config check --json printed the token")
	}
	var v struct {
		Settings []map[string]string `json:"settings"`
		Problems []map[string]string `json:"problems"`
	}
	if err := json.Unmarshal(out.Bytes(), &v); err != nil || len(v.Settings) == 0 || len(v.Problems) == 0 {
		t.Fatalf("json: %v %+v", err, v)
	}
}

func TestConfigInitCreates0600(t *testing.T) {
	p := filepath.Join(t.TempDir(), "steward", "config.yaml")
	var out, errb bytes.Buffer
	if code := Main([]string{"config", "init", "--config", p}, &out, &errb); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	fi, err := os.Stat(p)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v (%v), want 0600", fi.Mode().Perm(), err)
	}
	if code := Main([]string{"config", "init", "--config", p}, &out, &errb); code != ExitError {
		t.Fatalf("second init exit %d, want %d (never overwrite)", code, ExitError)
	}
}
