package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

var (
	backticked = regexp.MustCompile("`([^`\n]+)`")
	mdLink     = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	goSelector = regexp.MustCompile(`^[a-z][a-z0-9_]*\.[A-Z]\w*$`)
)

// generated are paths the docs name that a run makes and git ignores.
var generated = []string{"bench/out"}

// docFiles are the docs a reader follows: the README and docs/*.md.
func docFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{"README.md"}, files...)
}

// repoFiles returns the base names of every file in the repository (testdata, .git and
// generated output left out), to check a file the docs name by its name alone.
func repoFiles(t *testing.T) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	err := filepath.WalkDir(".", func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != "." && (d.Name() == ".git" || d.Name() == "testdata" || p == "bench/out") {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			names[d.Name()] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// repoPath says whether a backticked span names a path in this repository, and which: a
// span whose first segment is an entry at the root of the repository ("tui/keys.go",
// "locks/lockrec", "docs/keys.md"), without placeholders, globs or spaces.
func repoPath(span string, top map[string]bool) (string, bool) {
	if strings.ContainsAny(span, " *<>{}…$|,=") || strings.Contains(span, "://") || strings.HasPrefix(span, "./") && len(span) == 2 {
		return "", false
	}
	p := strings.TrimPrefix(span, "./")
	p, _, _ = strings.Cut(p, "#")
	if i := strings.Index(p, ":"); i > 0 {
		p = p[:i] // a line number, or a Go selector after the file
	}
	if dir, last := filepath.Split(p); dir != "" && goSelector.MatchString(last) {
		p = dir + last[:strings.IndexByte(last, '.')] // attention/store.TestSaveLoad: the package
	}
	first, _, _ := strings.Cut(p, "/")
	if !strings.Contains(p, "/") && !strings.HasSuffix(p, ".md") || !top[first] {
		return "", false
	}
	for _, g := range generated {
		if p == g || strings.HasPrefix(p, g+"/") {
			return "", false
		}
	}
	return strings.TrimSuffix(p, "/"), true
}

// TestDocsNameFilesThatExist: every path the README and docs/*.md name in backticks or link
// to exists, and every Go file they name by its name alone is somewhere in the repository.
func TestDocsNameFilesThatExist(t *testing.T) {
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	top := map[string]bool{}
	for _, e := range entries {
		top[e.Name()] = true
	}
	names := repoFiles(t)
	for _, doc := range docFiles(t) {
		data, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		text := string(data)
		line := func(off int) int { return strings.Count(text[:off], "\n") + 1 }
		for _, m := range backticked.FindAllStringSubmatchIndex(text, -1) {
			span := text[m[2]:m[3]]
			if p, ok := repoPath(span, top); ok {
				if _, err := os.Stat(p); err != nil {
					t.Errorf("%s:%d names %s, which the repository lacks", doc, line(m[0]), span)
				}
				continue
			}
			if strings.HasSuffix(span, ".go") && !strings.ContainsAny(span, "/ *<>") && !names[span] {
				t.Errorf("%s:%d names %s, and no file of the repository has that name", doc, line(m[0]), span)
			}
		}
		for _, m := range mdLink.FindAllStringSubmatchIndex(text, -1) {
			target := text[m[2]:m[3]]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "#") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			target, _, _ = strings.Cut(target, "#")
			if _, err := os.Stat(filepath.Join(filepath.Dir(doc), target)); err != nil {
				t.Errorf("%s:%d links to %s, which the repository lacks", doc, line(m[0]), target)
			}
		}
	}
}

// TestReadmeNamesEveryPackage: the README's table of packages ("What is here") names every
// package of the module as it is, and names no package the module lacks.
func TestReadmeNamesEveryPackage(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	data, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "\n## What is here\n")
	if !ok {
		t.Fatal(`README.md has no "## What is here" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	named := map[string]bool{}
	for _, l := range strings.Split(section, "\n") {
		if !strings.HasPrefix(l, "| `") {
			continue
		}
		cells := strings.Split(l, "|")
		for _, m := range backticked.FindAllStringSubmatch(cells[1], -1) {
			named[strings.TrimSuffix(m[1], "/")] = true
		}
	}
	pkgs := map[string]bool{}
	for _, p := range strings.Fields(string(out)) {
		rel := strings.TrimPrefix(strings.TrimPrefix(p, "steward"), "/")
		if rel == "" {
			rel = "steward"
		}
		pkgs[rel] = true
		if !named[rel] {
			t.Errorf("README.md's package table does not name %s", rel)
		}
	}
	for n := range named {
		if !pkgs[n] {
			t.Errorf("README.md's package table names %s, which is no package of the module", n)
		}
	}
}

// TestCodebaseMapMatchesLayers: docs/codebase.md's map puts every package of arch_test.go's
// layers in its layer, and no package in a layer it is not in.
func TestCodebaseMapMatchesLayers(t *testing.T) {
	data, err := os.ReadFile("docs/codebase.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "\n## The map\n")
	if !ok {
		t.Fatal(`docs/codebase.md has no "## The map" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	inDoc := map[string]int{}
	for _, l := range strings.Split(section, "\n") {
		cells := strings.Split(l, "|")
		if len(cells) < 4 {
			continue
		}
		n, err := strconv.Atoi(strings.TrimSpace(cells[1]))
		if err != nil {
			continue
		}
		for _, m := range backticked.FindAllStringSubmatch(cells[2], -1) {
			pkg := "steward/" + m[1]
			if m[1] == "steward" {
				pkg = "steward"
			}
			inDoc[pkg] = n
			if got, ok := layerOf(pkg); !ok || got != n {
				t.Errorf("docs/codebase.md puts %s in layer %d; arch_test.go says %d (known: %v)", m[1], n, got, ok)
			}
		}
	}
	for pkg, n := range layers {
		if _, ok := inDoc[pkg]; !ok {
			t.Errorf("docs/codebase.md's map lacks %s (layer %d in arch_test.go)", pkg, n)
		}
	}
}
