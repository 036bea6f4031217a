package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// trackerIssue is how a tracker citation reads: the word issue, a space, a number. A comment or
// a doc states its reason itself: a number means nothing to a reader without the tracker, and
// the tracker's numbering is not the code's. Items of the supervised system are written with
// their number sign ("acme/widgets#3", "item #5") and do not match.
// The number may stand on the next line of a wrapped comment or paragraph.
var trackerIssue = regexp.MustCompile(`\b[Ii]ssues?(?:[ \t]+|[ \t]*\n[ \t]*(?://[ \t]*)?)\d+`)

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
		text := string(data)
	found:
		for _, m := range trackerIssue.FindAllStringIndex(text, -1) {
			start := strings.LastIndexByte(text[:m[0]], '\n') + 1
			end := m[1] + strings.IndexByte(text[m[1]:]+"\n", '\n')
			l := text[start:end]
			for _, s := range seedPhrase {
				if strings.Contains(l, s) {
					continue found
				}
			}
			line := strings.Count(text[:m[0]], "\n") + 1
			t.Errorf("%s:%d names a tracker issue; say the reason itself: %s", p, line, strings.TrimSpace(l))
		}
	})
}

// maxLine is the longest a production line may be, in characters (a tab counts one).
const maxLine = 120

// linesHeld are the package directories whose production code holds maxLine; a package
// joins the list once its long lines are wrapped, and never leaves it.
var linesHeld = []string{".", "alloc", "app", "attention/store", "bench", "bench/internal/fleet",
	"bench/internal/headless", "bench/internal/phase", "bench/internal/stats", "config", "history",
	"history/gather", "internal/mkworkspace", "internal/mutant", "locks", "sim", "sim/foreign", "termsafe",
	"watchdir", "watchdir/watchdirtest"}

// TestProductionLinesFit: no production line of a held package is longer than maxLine, so a
// line can be read without scrolling and a side-by-side diff fits on a screen.
func TestProductionLinesFit(t *testing.T) {
	for _, dir := range linesHeld {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		if len(files) == 0 {
			t.Errorf("%s has no Go files: take it off linesHeld", dir)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for i, l := range strings.Split(string(data), "\n") {
				if n := utf8.RuneCountInString(l); n > maxLine {
					t.Errorf("%s:%d is %d characters long (at most %d)", f, i+1, n, maxLine)
				}
			}
		}
	}
}
