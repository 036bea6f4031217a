package gitea

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const teaYAML = `logins:
  - name: work
    url: https://git.example.invalid/
    token: tok-work-0123456789
    default: false
    user: alice
  - name: home
    url: http://127.0.0.1:3000
    token: tok-home-0123456789
    default: true
    user: bob
    insecure: true
`

func writeConfig(t *testing.T, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "tea", "config.yml")
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(teaYAML), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
	return p
}

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestLoadLogin(t *testing.T) {
	t.Parallel()
	p := writeConfig(t, 0o600)
	xdg := filepath.Dir(filepath.Dir(p))
	cases := []struct {
		name     string
		o        LoginOptions
		wantName string
		wantErr  error
	}{
		{"default from XDG", LoginOptions{Getenv: env(map[string]string{"XDG_CONFIG_HOME": xdg})}, "home", nil},
		{"by name", LoginOptions{Name: "work", ConfigPath: p, Getenv: env(nil)}, "work", nil},
		{"unknown name", LoginOptions{Name: "nope", ConfigPath: p, Getenv: env(nil)}, "", errLoginNotFound},
		{"env wins", LoginOptions{ConfigPath: p, Getenv: env(map[string]string{EnvURL: "http://127.0.0.1:9", EnvToken: "t-env"})}, "env", nil},
		{"name beats env", LoginOptions{Name: "work", ConfigPath: p, Getenv: env(map[string]string{EnvURL: "http://x", EnvToken: "t"})}, "work", nil},
		{"explicit", LoginOptions{URL: "http://127.0.0.1:9", Token: "t", ConfigPath: p, Getenv: env(nil)}, "explicit", nil},
		{"no config", LoginOptions{ConfigPath: filepath.Join(t.TempDir(), "missing.yml"), Getenv: env(nil)}, "", errNoLogin},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l, _, err := LoadLogin(tc.o)
			if !errors.Is(err, tc.wantErr) || l.Name != tc.wantName {
				t.Fatalf("got %q, %v; want %q, %v", l.Name, err, tc.wantName, tc.wantErr)
			}
		})
	}
	l, warns, err := LoadLogin(LoginOptions{ConfigPath: p, Getenv: env(nil)})
	if err != nil || l.URL != "http://127.0.0.1:3000" || l.User != "bob" || !l.Insecure || l.Token.value != "tok-home-0123456789" {
		t.Fatalf("home login: %+v %v", l, err)
	}
	if len(warns) != 1 || warns[0].Code != "insecure-tls" {
		t.Fatalf("warnings for 0600 insecure login: %+v", warns)
	}
}

func TestLoadLoginWarnsOnReadableConfig(t *testing.T) {
	t.Parallel()
	p := writeConfig(t, 0o644)
	_, warns, err := LoadLogin(LoginOptions{Name: "work", ConfigPath: p, Getenv: env(nil)})
	if err != nil {
		t.Fatal(err)
	}
	if len(warns) != 1 || warns[0].Code != "config-permissions" || strings.Contains(warns[0].Message, "tok-") {
		t.Fatalf("warnings: %+v", warns)
	}
}
