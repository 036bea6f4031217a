package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzLoad feeds arbitrary bytes to the loader: it must never panic, and nothing it
// reports — problems or displayed settings — may contain the token.
func FuzzLoad(f *testing.F) {
	f.Add([]byte(Template))
	f.Add([]byte("workspaces:\n  w:\n    gitea: {url: 'http://g', token: TOKENVALUE}\n"))
	f.Add([]byte("token: TOKENVALUE\n"))
	f.Add([]byte("clarification_sla: TOKENVALUE\n"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(dir, "c.yaml")
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		r, err := Load(Inputs{Path: p, Getenv: func(string) (string, bool) { return "", false }})
		if err != nil {
			return
		}
		tok := r.Get(KeyGiteaToken).Value
		if len(tok) < 6 {
			return
		}
		// A token that is also written as a plain value elsewhere is no leak of ours.
		for _, s := range r.Settings {
			if !s.Secret && strings.Contains(s.Value, tok) {
				return
			}
		}
		for k, v := range r.Roles {
			if strings.Contains(k+v, tok) {
				return
			}
		}
		for _, pr := range r.Problems {
			if strings.Contains(pr.Message, tok) {
				t.Fatalf("problem %q quotes the token", pr.Message)
			}
		}
		for _, s := range r.Shown() {
			if strings.Contains(s["value"], tok) {
				t.Fatalf("setting %s shows the token", s["key"])
			}
		}
	})
}
