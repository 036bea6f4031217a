package reponame

import (
	"errors"
	"strings"
	"testing"
)

// TestRepo is the rule as a table: each spelling, what it canonicalises to, or what the
// refusal says.
func TestRepo(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		why      string // a substring of the refusal; "" when accepted
	}{
		{"widgets", "widgets", ""},
		{"Widgets", "Widgets", ""}, // the spelling is kept; fold compares
		{"widgets.git", "widgets", ""},
		{"Widgets.git", "Widgets", ""},
		{"widgets.", "widgets.", ""},     // a name of its own, as Gitea would create it
		{"widgets..git", "widgets.", ""}, // a clone path of widgets.
		{"my_repo-2.0", "my_repo-2.0", ""},
		{"_x", "_x", ""},
		{".hidden", ".hidden", ""},
		{strings.Repeat("a", 100), strings.Repeat("a", 100), ""},
		{strings.Repeat("a", 100) + ".git", strings.Repeat("a", 100), ""},
		{strings.Repeat("a", 101), "", "101 bytes"},
		{"", "", "empty"},
		{".git", "", "only a .git"},
		{"./widgets", "", "path"},
		{"widgets/", "", "path"},
		{"acme/widgets", "", "path"},
		{`widgets\x`, "", "path"},
		{"ｗｉｄｇｅｔｓ", "", `full-width characters ("\uff57"); Gitea's names are ASCII letters, digits, '-', '_' and '.' (write "widgets"`},
		{"Ｗidgets", "", `write "Widgets"`},
		{"wídgets", "", `holds "\u00ed"`},
		{"wid gets", "", "space"},
		{"wid\x1bgets", "", "control character"},
		{"wid\u0085gets", "", "control character"},
		{"\xff", "", "UTF-8"},
		{"widgets.git.git", "", "ends in .git"},
		{"widgets.GIT", "", "ends in .git"},
		{"widgets.wiki", "", "ends in .wiki"},
		{"widgets.rss", "", "ends in .rss"},
		{"widgets.atom.git", "", "ends in .atom"},
		{"wid..gets", "", `".."`},
		{".", "", "reserves"},
		{"-", "", "reserves"},
		{"-.git", "", "reserves"},
		{"..", "", `".."`},
	} {
		got, err := Repo(tc.in)
		if tc.why == "" {
			if err != nil || got != tc.want {
				t.Errorf("Repo(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
			}
			continue
		}
		var e *Error
		if !errors.As(err, &e) || e.Part != "repository" || !strings.Contains(err.Error(), tc.why) || got != "" {
			t.Errorf("Repo(%q) = %q, %v; want a refusal saying %q", tc.in, got, err, tc.why)
		}
	}
}

func TestOwner(t *testing.T) {
	for _, tc := range []struct {
		in  string
		why string
	}{
		{"acme", ""},
		{"ACME", ""},
		{"a", ""},
		{"9lives", ""},
		{"acme-corp.eu_x", ""},
		{strings.Repeat("a", 40), ""},
		{strings.Repeat("a", 41), "41 bytes"},
		{"", "empty"},
		{"-acme", "start with a letter"},
		{"_acme", "start with a letter"},
		{".acme", "start with a letter"},
		{"acme.", "must not end"},
		{"acme-", "must not end"},
		{"ac--me", "two of"},
		{"ac._me", "two of"},
		{"./acme", "path"},
		{"acme/", "path"},
		{"ａｃｍｅ", `write "acme"`},
		{"ac me", "space"},
		{"acmé", `holds "\u00e9"`},
	} {
		err := Owner(tc.in)
		if tc.why == "" {
			if err != nil {
				t.Errorf("Owner(%q) = %v; want accepted", tc.in, err)
			}
			continue
		}
		var e *Error
		if !errors.As(err, &e) || e.Part != "owner" || !strings.Contains(err.Error(), tc.why) {
			t.Errorf("Owner(%q) = %v; want a refusal saying %q", tc.in, err, tc.why)
		}
	}
}

// TestSameRepo: the spellings Gitea serves as one repository are one; a refused spelling
// is never the same as any other, and a trailing dot is a repository of its own.
func TestSameRepo(t *testing.T) {
	for _, tc := range []struct {
		o1, r1, o2, r2 string
		same           bool
	}{
		{"acme", "widgets", "acme", "widgets", true},
		{"acme", "widgets", "ACME", "Widgets.git", true},
		{"acme", "widgets", "Acme", "WIDGETS", true},
		{"acme", "widgets", "acme", "widgets.", false},
		{"acme", "widgets", "acme", "./widgets", false},
		{"acme", "widgets", "acme", "widgets/", false},
		{"acme", "widgets", "acme", "ｗｉｄｇｅｔｓ", false},
		{"acme", "./widgets", "acme", "./widgets", false},
		{"acme", "widgets", "acme2", "widgets", false},
	} {
		if got := SameRepo(tc.o1, tc.r1, tc.o2, tc.r2); got != tc.same {
			t.Errorf("SameRepo(%s/%s, %s/%s) = %v; want %v", tc.o1, tc.r1, tc.o2, tc.r2, got, tc.same)
		}
	}
}

func TestIsCanonical(t *testing.T) {
	for _, tc := range []struct {
		o, r string
		want bool
	}{
		{"acme", "widgets", true},
		{"ACME", "Widgets", true},
		{"acme", "widgets.", true},
		{"acme", "widgets.git", false},
		{"acme", "./widgets", false},
		{"acme.", "widgets", false},
		{"acme", "ｗｉｄｇｅｔｓ", false},
	} {
		if got := IsCanonical(tc.o, tc.r); got != tc.want {
			t.Errorf("IsCanonical(%q, %q) = %v; want %v", tc.o, tc.r, got, tc.want)
		}
	}
}

// FuzzRepo: whatever the input, an accepted name is canonical (Repo of it is itself), holds
// only what Gitea accepts, and is never longer than the input.
func FuzzRepo(f *testing.F) {
	for _, s := range []string{"widgets", "widgets.git", "./widgets", "ｗｉｄｇｅｔｓ", "widgets.", "a..git", ".git"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := Repo(s)
		if err != nil {
			return
		}
		if again, err := Repo(got); err != nil || again != got {
			t.Fatalf("Repo(%q) = %q, but Repo(%q) = %q, %v", s, got, got, again, err)
		}
		if len(got) > len(s) || len(got) == 0 || chars(got) != "" {
			t.Fatalf("Repo(%q) = %q", s, got)
		}
	})
}
