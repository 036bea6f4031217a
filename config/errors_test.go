package config

import (
	"strings"
	"testing"
)

// Parse errors say what was wrong and what is accepted, in the file's terms: no Go type
// names, no YAML tags (defect 12).
func TestParseErrorsSpeakTheFilesLanguage(t *testing.T) {
	for body, want := range map[string]string{
		"colour: blue\n":         `unknown key "colour"`,
		"read_only: maybe\n":     "true or false",
		"roles: [a]\n":           "a mapping such as {alice: operator}",
		"thresholds: 5\n":        "stale_pr and contention_window",
		"marker_labels: x\n":     "a list of text values",
		"clarification_sla: 5":   "positive duration such as 24h",
		"workspaces: {w: [1]}\n": "a mapping with locks_dir",
	} {
		_, err := Parse([]byte(body))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", body, err, want)
			continue
		}
		for _, bad := range []string{"config.", "!!", "map[string]", "[]string", "unmarshal"} {
			if strings.Contains(err.Error(), bad) {
				t.Errorf("%q: %v shows Go internals (%s)", body, err, bad)
			}
		}
	}
}

// A parse error that quotes a value the file also holds as a token hides it, whole or cut
// short as the message quotes it (clipped to 40 bytes, or to 7 and "..." by the YAML
// decoder): no piece of it shows. A value of three bytes or fewer is no token and stays
// readable. Load hides a token the same way in every problem.
func TestParseErrorsHideTokens(t *testing.T) {
	long := strings.Repeat("k", 20) + strings.Repeat("z", 30)
	for _, tc := range []struct{ key, tok, want string }{
		{"read_only", "abcd", `"[hidden]" (text)`},
		{"read_only", "abc", `"abc" (text)`},
		{"read_only", long, `"[hidden]" (text)`},
		{"read_only", long[:11], `"[hidden]" (text)`},
		{"clarification_sla", long, `"[hidden]" is not a positive duration`},
		{"clarification_sla", long[:40], `"[hidden]" is not a positive duration`},
	} {
		body := tc.key + ": " + tc.tok + "\nworkspaces:\n  w:\n    gitea:\n      token: '" + tc.tok + "'\n"
		_, err := Parse([]byte(body))
		if err == nil || !strings.Contains(err.Error(), tc.want) || len(tc.tok) > 3 && strings.Contains(err.Error(), tc.tok[:4]) {
			t.Errorf("%s: %s (%d bytes): %v, want %s", tc.key, tc.tok, len(tc.tok), err, tc.want)
		}
		r, err := Load(Inputs{Path: write(t, body, 0o600), Getenv: env(nil), SystemPaths: []string{}})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range r.Problems {
			if len(tc.tok) > 3 && strings.Contains(p.Message, tc.tok[:4]) {
				t.Errorf("%s: %s (%d bytes): problem %q", tc.key, tc.tok, len(tc.tok), p.Message)
			}
		}
	}
	// A token set by a variable is hidden in a problem quoting a value clipped to 40 bytes.
	r, err := Load(Inputs{Getenv: noConfig(t, map[string]string{"STEWARD_GITEA_TOKEN": long, "STEWARD_THEME": long}), SystemPaths: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	if msg := message(r, "bad-theme"); !strings.Contains(msg, `theme "[hidden]" (`) || strings.Contains(msg, long[:4]) {
		t.Errorf("a theme of the token's 50 bytes: %q", msg)
	}
}
