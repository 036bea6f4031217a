package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// trackerIssue is how a tracker citation reads: the word issue, a space, a number. A comment or
// a doc states its reason itself: a number means nothing to a reader without the tracker, and
// the tracker's numbering is not the code's. Items of the supervised system are written with
// their number sign ("acme/widgets#3", "item #5") and do not match.
var trackerIssue = regexp.MustCompile(`\b[Ii]ssues? \d+`)

// seedPhrase lines are test inputs in the supervised system's own words, kept as written.
var seedPhrase = []string{"depends on issue"}

// textFiles calls visit for every source, doc and script file of the repository (no
// testdata: golden files are screens, and fixtures are the seed's).
func textFiles(t *testing.T, visit func(path string, data []byte)) {
	t.Helper()
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != "." && (d.Name() == "testdata" || d.Name() == ".git" || d.Name() == "out") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, ".md") &&
			!strings.HasPrefix(p, ".ci/") && !strings.HasPrefix(p, "scripts/") {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		visit(p, data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestNoTrackerIssueNumbers: no file names a tracker issue as its reason (commit messages
// may).
func TestNoTrackerIssueNumbers(t *testing.T) {
	textFiles(t, func(p string, data []byte) {
	lines:
		for i, l := range strings.Split(string(data), "\n") {
			if !trackerIssue.MatchString(l) {
				continue
			}
			for _, s := range seedPhrase {
				if strings.Contains(l, s) {
					continue lines
				}
			}
			t.Errorf("%s:%d names a tracker issue; say the reason itself: %s", p, i+1, strings.TrimSpace(l))
		}
	})
}
