package main

import (
	"fmt"
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

// TestProductionLinesFit: no production line of any package of the module is longer than
// maxLine, so a line can be read without scrolling and a side-by-side diff fits on a screen.
// Every directory with Go files is walked (as the go tool does: not testdata, nor one whose
// name starts with a dot or an underscore), so a new package is held from its first line.
func TestProductionLinesFit(t *testing.T) {
	checkLinesFit(t, ".", t.Errorf)
}

// checkLinesFit reports through errorf every production line under root longer than
// maxLine, and fails t when it finds no package to hold.
func checkLinesFit(t *testing.T, root string, errorf func(format string, args ...any)) {
	t.Helper()
	pkgs := map[string]bool{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		pkgs[filepath.Dir(p)] = true
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for i, l := range strings.Split(string(data), "\n") {
			if n := utf8.RuneCountInString(l); n > maxLine {
				errorf("%s:%d is %d characters long (at most %d)", p, i+1, n, maxLine)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) == 0 {
		t.Fatalf("no Go package under %s to hold to %d characters a line", root, maxLine)
	}
}

// TestProductionLinesFitFindsALongLine: the walk above sees a new package and a long line in
// it, and passes over test files and testdata.
func TestProductionLinesFitFindsALongLine(t *testing.T) {
	root := t.TempDir()
	long := "package p\n\n// " + strings.Repeat("x", maxLine) + "\n"
	fits := "package p\n\n// " + strings.Repeat("é", maxLine-3) + "\n" // runes, not bytes
	for name, text := range map[string]string{
		"a/b/new.go":        long,
		"a/b/new_test.go":   long,
		"a/testdata/gen.go": long,
		"a/fits.go":         fits,
		".hidden/x.go":      long,
	} {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var found []string
	checkLinesFit(t, root, func(format string, args ...any) { found = append(found, fmt.Sprintf(format, args...)) })
	want := filepath.Join(root, "a", "b", "new.go") + ":3 is 123 characters long (at most 120)"
	if len(found) != 1 || found[0] != want {
		t.Errorf("found %q, want only %q", found, want)
	}
}
