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

// A parse error that quotes a value the file also holds as a token hides it; a value of
// three bytes or fewer is no token and stays readable.
func TestParseErrorsHideTokens(t *testing.T) {
	for _, tc := range []struct{ key, val, want string }{
		{"token", "abcd", `"[hidden]" (text)`},
		{"token", "abc", `"abc" (text)`},
	} {
		body := "read_only: " + tc.val + "\nworkspaces:\n  w:\n    gitea:\n      " + tc.key + ": '" + tc.val + "'\n"
		_, err := Parse([]byte(body))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %q: %v, want %s", tc.key, tc.val, err, tc.want)
		}
	}
}
