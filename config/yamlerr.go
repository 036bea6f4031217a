package config

import (
	"regexp"
	"strings"
)

var (
	yamlUnknownKey = regexp.MustCompile("^line ([0-9]+): field (.+) not found in type [^ ]+$")
	yamlWrongType  = regexp.MustCompile("^line ([0-9]+): cannot unmarshal !!([a-z]+)(?: `(.*)`)? into (.+)$")
)

// yamlKinds names a YAML node kind in words.
var yamlKinds = map[string]string{"str": "text", "seq": "a list", "map": "a mapping", "int": "a number",
	"float": "a number", "bool": "true or false", "null": "empty", "timestamp": "a date", "binary": "binary data"}

// yamlWants names what a Go type of the schema accepts, in the file's words.
var yamlWants = map[string]string{
	"bool":                        "true or false",
	"string":                      "a text value",
	"[]string":                    "a list of text values, such as [a, b]",
	"map[string]string":           "a mapping such as {alice: operator}",
	"map[string]config.Workspace": "a mapping of workspace names to workspaces",
	"config.Workspace":            "a mapping with locks_dir, db_path, repo_root, audit_log, gitea",
	"config.Gitea":                "a mapping with tea_login or url and token_file, owner, repo",
	"config.Thresholds":           "a mapping with stale_pr and contention_window",
	"config.File":                 "a mapping of settings",
	"config.SystemFile":           "a mapping with read_only and roles",
}

// yamlReason rewrites a YAML decoder's message in the file's own terms — what was wrong,
// where, and what is accepted — without Go type names, and hides token-looking values.
func yamlReason(msg string, data []byte) string {
	msg = strings.TrimPrefix(msg, "yaml: ")
	msg = strings.TrimPrefix(msg, "unmarshal errors:\n")
	var out []string
	for _, line := range strings.Split(msg, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if m := yamlUnknownKey.FindStringSubmatch(line); m != nil {
			line = "line " + m[1] + ": unknown key " + quoteClip(m[2])
		} else if m := yamlWrongType.FindStringSubmatch(line); m != nil {
			got := yamlKinds[m[2]]
			if got == "" {
				got = "a " + m[2] + " value"
			}
			if m[3] != "" {
				got = quoteClip(m[3]) + " (" + got + ")"
			}
			want := yamlWants[m[4]]
			if want == "" {
				want = "another kind of value"
			}
			line = "line " + m[1] + ": " + got + " where the schema wants " + want
		}
		out = append(out, line)
	}
	return scrubYAML(strings.Join(out, "; "), data)
}

func quoteClip(s string) string { return `"` + clip(s) + `"` }
