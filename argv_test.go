package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// secretName matches names that hold a credential.
var secretName = regexp.MustCompile(`(?i)token|passw|secret|credential`)

// secretFlags are command-line flags that carry a credential on a command line.
var secretFlags = map[string]bool{"--password": true, "--passwd": true, "--token": true, "--gitea-token": true,
	"--access-token": true, "--secret": true}

// TestNoSecretInChildArgv: no steward process puts a credential on a child's command line,
// where every user of the machine can read it (/proc/<pid>/cmdline). In every file that
// starts processes (imports os/exec), no exec.Command argument may name a token, password or
// secret, and no call may pass a credential flag such as "--password" (the
// Gitea test harness ran `gitea admin user create --password <pw>`; this test failed on
// it before the fix).
func TestNoSecretInChildArgv(t *testing.T) {
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && p != "." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		spawns := false
		for _, im := range f.Imports {
			spawns = spawns || im.Path.Value == `"os/exec"`
		}
		if !spawns {
			return nil
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			for _, a := range call.Args {
				if lit, ok := a.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					if v, err := strconv.Unquote(lit.Value); err == nil && secretFlags[v] {
						t.Errorf("%s: a call passes the credential flag %s (a child's argv is readable by every user)", fset.Position(lit.Pos()), v)
					}
				}
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || (sel.Sel.Name != "Command" && sel.Sel.Name != "CommandContext") {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); !ok || x.Name != "exec" {
				return true
			}
			for _, a := range call.Args {
				ast.Inspect(a, func(m ast.Node) bool {
					if id, ok := m.(*ast.Ident); ok && secretName.MatchString(id.Name) && !namesAPath(id.Name) {
						t.Errorf("%s: exec.%s gets %s on the child's command line", fset.Position(id.Pos()), sel.Sel.Name, id.Name)
					}
					return true
				})
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// namesAPath reports names of a file holding a secret (tokenFile): passing its path is the
// right way to hand a child a secret.
func namesAPath(name string) bool {
	n := strings.ToLower(name)
	return strings.HasSuffix(n, "file") || strings.HasSuffix(n, "path")
}
