package config

import (
	"strings"
	"testing"
)

// TestOneBadValueLeavesTheRest: every problem of the file is listed, each with its key and
// line, and the settings the file gets right keep their values and origins (before, one bad
// duration made every setting read "default" and only the first error was reported). The
// bad settings read invalid, from the file, never as the default.
func TestOneBadValueLeavesTheRest(t *testing.T) {
	p := write(t, `workspaces:
  main:
    locks_dir: /file/locks
    db_path: /file/db
thresholds:
  contention_window: 10x
  stale_pr: 48h
clarification_sla: 5
colour: blue
marker_labels: [needs-answer, waiting]
read_only: maybe
`, 0o600)
	r, err := Load(Inputs{Path: p, Getenv: env(map[string]string{"HOME": "/home/u"}), SystemPaths: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	var parse []string
	for _, pr := range r.Problems {
		if pr.Code == "parse" {
			parse = append(parse, pr.Message)
		}
	}
	for _, want := range []string{
		`thresholds.contention_window: line 6: "10x" is not a positive duration`,
		`clarification_sla: line 8: "5" is not a positive duration`,
		`colour: line 9: unknown key "colour"`,
		`read_only: line 11: "maybe" (text) where the schema wants true or false`,
	} {
		found := false
		for _, m := range parse {
			found = found || strings.Contains(m, want)
		}
		if !found {
			t.Errorf("no problem says %q; have:\n%s", want, strings.Join(parse, "\n"))
		}
	}
	if len(parse) != 4 {
		t.Errorf("%d parse problems, want 4:\n%s", len(parse), strings.Join(parse, "\n"))
	}
	for key, want := range map[string]Setting{
		KeyLocksDir:         {Value: "/file/locks", Source: FromFile, Origin: "workspaces.main.locks_dir"},
		KeyDBPath:           {Value: "/file/db", Source: FromFile, Origin: "workspaces.main.db_path"},
		KeyStalePR:          {Value: "48h0m0s", Source: FromFile, Origin: KeyStalePR},
		KeyMarkerLabels:     {Value: "needs-answer,waiting", Source: FromFile, Origin: KeyMarkerLabels},
		KeyContentionWindow: {Source: FromFile, Origin: KeyContentionWindow, Invalid: true},
		KeyClarificationSLA: {Source: FromFile, Origin: KeyClarificationSLA, Invalid: true},
		KeyTheme:            {Value: "auto", Source: FromDefault},
	} {
		got := r.Get(key)
		if got.Value != want.Value || got.Source != want.Source || got.Origin != want.Origin || got.Invalid != want.Invalid {
			t.Errorf("%s = %+v, want %+v", key, got, want)
		}
	}
	if d := r.Get(KeyContentionWindow).Display(); !strings.Contains(d, "invalid") {
		t.Errorf("an invalid setting displays %q", d)
	}
	if !r.HasErrors() {
		t.Error("a file with bad values has no errors")
	}
	// An environment variable still wins over the bad file value: its origin is intact.
	r, _ = Load(Inputs{Path: p, Getenv: env(map[string]string{"HOME": "/home/u", "STEWARD_CONTENTION_WINDOW": "5m"}), SystemPaths: []string{}})
	if s := r.Get(KeyContentionWindow); s.Invalid || s.Source != fromEnv || s.Value != "5m" {
		t.Errorf("contention window with the variable set: %+v", s)
	}
}

// A bad value written on a line of its own, below its key (or as an item of a list), is
// the problem of that key still: the setting reads invalid, never the default.
func TestBadValueOnItsOwnLine(t *testing.T) {
	p := write(t, "clarification_sla:\n  soon\nmarker_labels:\n  - waiting\n  - [x]\n", 0o600)
	r, err := Load(Inputs{Path: p, Getenv: env(nil), SystemPaths: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`clarification_sla: line 2: "soon" is not a positive duration`, "marker_labels: line 5: a list where the schema wants a text value"} {
		if !strings.Contains(strings.Join(problemMessages(r), "\n"), want) {
			t.Errorf("no problem says %q: %v", want, r.Problems)
		}
	}
	for _, k := range []string{KeyClarificationSLA, KeyMarkerLabels} {
		if s := r.Get(k); !s.Invalid || s.Source != FromFile {
			t.Errorf("%s = %+v, want invalid from the file", k, s)
		}
	}
}

func problemMessages(r *Resolved) []string {
	var out []string
	for _, p := range r.Problems {
		out = append(out, p.Message)
	}
	return out
}
