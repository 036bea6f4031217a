package main

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// layer of each package: a package may import only packages of a lower layer (or its own
// subpackages). main is on top; model and the pure leaves are pure by structure.
var layers = map[string]int{
	"steward":                 7,
	"steward/bench":           7, // the performance harness: a program beside main (docs/performance.md)
	"steward/reliability":     7, // the reliability suite: tests of every package through their public APIs
	"steward/cli":             6,
	"steward/app":             5, // the one assembly of a workspace session: ui, status, the demo's workbench
	"steward/sim":             4,
	"steward/mcp":             4,
	"steward/tui":             4,
	"steward/history/gather":  4, // the read-only reads of the evidence (imports govern for the audit log)
	"steward/govern":          3,
	"steward/govern/actionid": 0, // the one table of action ids: a pure leaf every layer may name
	"steward/attention":       3, // pure (model in, events out); attention/notify runs the notify command
	"steward/history":         2, // pure: evidence in, answers out
	"steward/model":           2, // pure by structure: TestPureByStructure
	"steward/model/live":      2, // the live part of the model: loading, watching, re-probing
	"steward/alloc":           2,
	"steward/locks":           1,
	"steward/leases":          1,
	"steward/gitea":           1,
	"steward/termsafe":        0,
	"steward/reponame":        0, // pure: the rule of repository spellings (TestPureByStructure)
	"steward/watchdir":        0, // the one directory watcher: imports no steward package
	"steward/config":          0,
}

func layerOf(pkg string) (int, bool) {
	for p := pkg; p != "."; p = filepath.Dir(p) {
		if l, ok := layers[p]; ok {
			return l, true
		}
		if !strings.Contains(p, "/") {
			break
		}
	}
	return 0, false
}

// tree returns the top-level package a package belongs to (steward/gitea for
// steward/gitea/fakegitea): packages of one tree may import each other.
func tree(pkg string) string {
	parts := strings.SplitN(pkg, "/", 3)
	if len(parts) < 2 {
		return pkg
	}
	return parts[0] + "/" + parts[1]
}

func TestImportDirection(t *testing.T) {
	out, err := exec.Command("go", "list", "-json", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	seen := 0
	for dec.More() {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		from, ok := layerOf(p.ImportPath)
		if !ok {
			if strings.HasPrefix(p.ImportPath, "steward/internal/") {
				continue
			}
			t.Errorf("package %s has no layer in arch_test.go: add it and to docs/architecture.md", p.ImportPath)
			continue
		}
		seen++
		for _, imp := range p.Imports {
			if !strings.HasPrefix(imp, "steward") {
				continue
			}
			to, ok := layerOf(imp)
			if !ok {
				continue
			}
			sub := tree(imp) == tree(p.ImportPath)
			if to >= from && !sub {
				t.Errorf("%s (layer %d) imports %s (layer %d): imports go downward only", p.ImportPath, from, imp, to)
			}
			// The benchmark harness drives the workbench headless to measure it.
			if imp == "steward/tui" && p.ImportPath != "steward/cli" && p.ImportPath != "steward/app" && tree(p.ImportPath) != "steward/bench" {
				t.Errorf("%s imports tui: nothing but the command line, the assembly (its workbench options) and the benchmark harness may", p.ImportPath)
			}
		}
	}
	if seen < 5 {
		t.Fatalf("saw only %d packages", seen)
	}
}

// writers are the write primitives of the sources: only govern may call them.
var writers = map[string][]string{
	"steward/locks":  {"WriteCAS", "Archive", "Restore"},
	"steward/leases": {"Claim", "Heartbeat", "Release", "ExpireSweep", "Abandon", "ReclaimExpired", "Create", "Migrate", "OpenReadWrite", "OpenStore", "InitPG"},
	"steward/gitea":  {"CreateComment", "AddLabels", "RemoveLabel", "SeedRepo"},
}

// demoSetup are write primitives that make a demo's fixtures, not actions on a supervised
// source: besides govern, only the directories named may call them (the demo's simulator
// fills the Gitea repository it runs on).
var demoSetup = map[string]map[string]bool{"SeedRepo": {"sim": true}}

// writerMethods are write primitives distinctive enough to check by name alone.
var writerMethods = map[string]bool{
	"WriteCAS": true, "ReclaimExpired": true, "ExpireSweep": true, "OpenReadWrite": true, "OpenStore": true, "InitPG": true,
	"CreateComment": true, "AddLabels": true, "RemoveLabel": true, "Migrate": true,
}

// sourceOrCore reports the directories whose code may name the write primitives: the core
// and the source packages that define them.
func sourceOrCore(dir string) bool {
	for _, p := range []string{"govern", "locks", "leases", "gitea"} {
		if dir == p || strings.HasPrefix(dir, p+"/") {
			return true
		}
	}
	return false
}

// allowedWriters may call the write primitives: the core, and the packages' own code.
func allowedWriter(pkgDir, imp string) bool {
	return pkgDir == "govern" || strings.HasPrefix(pkgDir, "govern/") ||
		"steward/"+pkgDir == imp || strings.HasPrefix("steward/"+pkgDir, imp+"/")
}

func TestOnlyGovernWrites(t *testing.T) {
	fset := token.NewFileSet()
	checked := 0
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != "." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		names := map[string]string{}
		// others are the file's other imports: a selector on one of them names that
		// package's constant or function (actionid.ReclaimExpired, an action id), never a
		// write primitive reached through a value.
		others := map[string]bool{}
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			name := filepath.Base(p)
			if im.Name != nil {
				name = im.Name.Name
			}
			if _, ok := writers[p]; !ok {
				others[name] = true
				continue
			}
			names[name] = p
		}
		dir := filepath.Dir(path)
		full, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		checked++
		ast.Inspect(full, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			// Methods reached through a value (a Store, a Client) are caught by name.
			if x, ok := sel.X.(*ast.Ident); ok && others[x.Name] {
				return true
			}
			if writerMethods[sel.Sel.Name] && !sourceOrCore(dir) {
				t.Errorf("%s: calls .%s; only govern/ may call the write primitives", fset.Position(sel.Pos()), sel.Sel.Name)
			}
			x, ok := sel.X.(*ast.Ident)
			if !ok {
				return true
			}
			imp, ok := names[x.Name]
			if !ok {
				return true
			}
			for _, w := range writers[imp] {
				if sel.Sel.Name == w && !allowedWriter(dir, imp) && !demoSetup[w][dir] {
					t.Errorf("%s: calls %s.%s; only govern/ may call the write primitives", fset.Position(sel.Pos()), imp, w)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("checked %d files that import a source package", checked)
}

// pureStd are the standard packages the pure packages (purePackages, docs/architecture.md)
// may import directly: none reads a file, a process, the network or the
// environment.
var pureStd = map[string]bool{
	// The codecs and buffers a streamed snapshot keeps its pages in (model.StreamJSON,
	// model.LeaseStore): they read and write the caller's bytes, never a file.
	"bufio": true, "compress/flate": true, "encoding/binary": true, "io": true,
	"bytes": true, "cmp": true, "container/heap": true, "encoding/json": true, "errors": true, "fmt": true,
	"iter": true, "maps": true, "math": true, "slices": true, "sort": true, "strconv": true, "strings": true,
	"sync": true, "time": true, "unicode": true, "unicode/utf16": true, "unicode/utf8": true, "unique": true,
}

// pureLeaves are steward's packages that do no IO: the record types, decoders and verdicts
// the model and history share with the sources that read them. Each is pure by structure —
// what go list -deps names of it is the standard library and other pure leaves only
// (TestPureByStructure) — so a package that imports them imports no reader.
var pureLeaves = map[string]bool{
	"steward/locks/lockrec":   true,
	"steward/govern/actionid": true,
	"steward/leases/leaserec": true,
	"steward/gitea/gitearec":  true,
	"steward/reponame":        true,
}

// purePackages are held to TestPureByStructure: the pure leaves, and the model, which
// imports them and no source package. (model is not a leaf: nothing pure may import it.)
var purePackages = []string{"steward/model"}

// ioStd are the standard packages that reach a socket, a process, a database driver or a
// user database: none may be among the dependencies of a pure package. (fmt, time and
// encoding/json depend on os and syscall, so those cannot be ruled out by dependency; the
// direct imports of a pure package are held to pureStd instead.)
func ioStd(p string) bool {
	for _, io := range []string{"net", "os/exec", "os/signal", "os/user", "database/sql", "plugin", "crypto/tls", "log/syslog"} {
		if p == io || strings.HasPrefix(p, io+"/") {
			return true
		}
	}
	return false
}

// clock are the names of package time that read the clock or wait on it: the pure packages
// take now as a parameter.
var clock = map[string]bool{"Now": true, "Since": true, "Until": true, "Sleep": true, "After": true,
	"AfterFunc": true, "NewTimer": true, "NewTicker": true, "Tick": true}

// TestPureByStructure: everything a pure leaf or the model depends on, transitively, is the
// standard library without its network, process and database packages, or a pure leaf —
// never a source's reader, a database driver, the Gitea SDK or fsnotify; their own code
// imports only pureStd and the pure leaves, and reads no clock.
func TestPureByStructure(t *testing.T) {
	for p := range pureLeaves {
		checkPureDeps(t, p)
	}
	for _, p := range purePackages {
		checkPureDeps(t, p)
	}
}

// checkPureDeps fails for every dependency of pkg that is not the standard library without
// IO or a pure leaf.
func checkPureDeps(t *testing.T, pkg string) {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}} {{.Standard}}", pkg).Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		dep, std, _ := strings.Cut(line, " ")
		n++
		switch {
		case dep == pkg || pureLeaves[dep]:
		case std != "true":
			t.Errorf("%s depends on %s: a pure package depends on the standard library and steward's pure leaves only", pkg, dep)
		case ioStd(dep):
			t.Errorf("%s depends on %s, which reaches the network, a process or a database", pkg, dep)
		}
	}
	if n < 2 {
		t.Fatalf("go list -deps %s named %d packages", pkg, n)
	}
	checkPureFiles(t, strings.TrimPrefix(pkg, "steward/"))
}

// checkPureFiles holds the production files of dir to direct imports from pureStd and the
// pure leaves, and to no reading of the clock.
func checkPureFiles(t *testing.T, dir string) {
	t.Helper()
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		names := map[string]string{}
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			if !pureStd[p] && !pureLeaves[p] {
				t.Errorf("%s imports %s: a pure package imports only standard packages without IO and steward's pure leaves", path, p)
			}
			name := filepath.Base(p)
			if im.Name != nil {
				name = im.Name.Name
			}
			names[name] = p
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			x, ok := sel.X.(*ast.Ident)
			if !ok {
				return true
			}
			if names[x.Name] == "time" && clock[sel.Sel.Name] {
				t.Errorf("%s: time.%s reads the clock: a pure package takes now as a parameter", fset.Position(sel.Pos()), sel.Sel.Name)
			}
			return true
		})
	}
	if checked == 0 {
		t.Fatalf("checked no file of %s/", dir)
	}
}

// sdkPrefix is the Gitea SDK's module: only gitea/ and its sub-packages may import it.
const sdkPrefix = "code.gitea.io/sdk/gitea"

// TestOneGiteaDoor: every package but steward/gitea and its sub-packages — production code
// and tests alike — reaches Gitea through gitea's API (reads, write primitives, the demo's
// SeedRepo), never through the SDK.
func TestOneGiteaDoor(t *testing.T) {
	out, err := exec.Command("go", "list", "-json", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	seen := 0
	for dec.More() {
		var p struct {
			ImportPath                         string
			Imports, TestImports, XTestImports []string
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		seen++
		if tree(p.ImportPath) == "steward/gitea" {
			continue
		}
		for _, imps := range [][]string{p.Imports, p.TestImports, p.XTestImports} {
			for _, imp := range imps {
				if imp == sdkPrefix || strings.HasPrefix(imp, sdkPrefix+"/") {
					t.Errorf("%s imports %s: only gitea/ talks to Gitea through the SDK", p.ImportPath, imp)
				}
			}
		}
	}
	if seen < 10 {
		t.Fatalf("saw only %d packages", seen)
	}
}

// TestOnlySimImportsForeign: package sim/foreign writes legacy lock files outside the
// governed core, on purpose, for the demo (sim/foreign/doc.go); nothing but package sim —
// not even another test — may import it.
func TestOnlySimImportsForeign(t *testing.T) {
	const foreign = "steward/sim/foreign"
	out, err := exec.Command("go", "list", "-json", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	importers := 0
	for dec.More() {
		var p struct {
			ImportPath                         string
			Imports, TestImports, XTestImports []string
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		for _, imp := range append(append(p.Imports, p.TestImports...), p.XTestImports...) {
			if imp != foreign || p.ImportPath == foreign {
				continue
			}
			if p.ImportPath != "steward/sim" {
				t.Errorf("%s imports %s: only package sim may (the demo's one writer outside the governed core)", p.ImportPath, foreign)
			}
			importers++
		}
	}
	if importers == 0 {
		t.Fatalf("nothing imports %s: the rule checks nothing (was the package moved?)", foreign)
	}
}
