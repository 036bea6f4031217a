package main

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"
)

const sample = `package p

const (
	short     = 1
	muchLonger = 2
)

func f(a, b int) bool {
	x := map[string]int{"a": 1, "bb": 2}
	return a > b && x["a"] <= b
}
`

// mutate rewrites src as gremlins does: the AST's first binary operator op becomes to, and
// the file is printed back through go/printer (whose alignment is not gofmt's).
func mutate(t *testing.T, src string, op, to token.Token) ([]byte, token.Position) {
	t.Helper()
	fs := token.NewFileSet()
	f, err := parser.ParseFile(fs, "p.go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	var pos token.Position
	ast.Inspect(f, func(n ast.Node) bool {
		if b, ok := n.(*ast.BinaryExpr); ok && b.Op == op && !pos.IsValid() {
			pos = fs.Position(b.OpPos)
			b.Op = to
		}
		return true
	})
	var out bytes.Buffer
	if err := printer.Fprint(&out, fs, f); err != nil {
		t.Fatal(err)
	}
	return out.Bytes(), pos
}

func TestFirstDifferenceIsTheMutatedToken(t *testing.T) {
	for _, c := range []struct{ op, to token.Token }{
		{token.GTR, token.LEQ}, {token.LEQ, token.LSS}, {token.LAND, token.LOR},
	} {
		mut, pos := mutate(t, sample, c.op, c.to)
		if bytes.Equal(mut, []byte(sample)) {
			t.Fatal("the mutation changed nothing")
		}
		line, col, was, now := firstDifference([]byte(sample), mut)
		if line != pos.Line || col != pos.Column {
			t.Errorf("%s → %s: found %d:%d, the token is at %d:%d", c.op, c.to, line, col, pos.Line, pos.Column)
		}
		if !strings.Contains(was, c.op.String()) || !strings.Contains(now, c.to.String()) {
			t.Errorf("%s → %s: lines %q → %q", c.op, c.to, was, now)
		}
	}
	// Printed back unchanged (another mutant's rollback), the layout differs but no token.
	same, _ := mutate(t, sample, token.ILLEGAL, token.ILLEGAL)
	if line, _, _, _ := firstDifference([]byte(sample), same); line != 0 {
		t.Errorf("a file that differs only in layout reads as mutated at line %d", line)
	}
}

func TestRunPatternSelectsEveryPathAndAnchorsEachLevel(t *testing.T) {
	p := runPattern([][]string{{"TestPostgres", "steward", "Claim(x)"}, {"TestPostgres", "seed", "Release"}})
	levels := strings.Split(p, "/")
	if len(levels) != 3 {
		t.Fatalf("pattern %q: want 3 levels", p)
	}
	for i, names := range [][]string{{"TestPostgres"}, {"steward", "seed"}, {"Claim(x)", "Release"}} {
		re := regexp.MustCompile(levels[i])
		for _, n := range names {
			if !re.MatchString(n) {
				t.Errorf("level %d %q does not select %q", i, levels[i], n)
			}
		}
		if re.MatchString("x"+names[0]) || re.MatchString(names[0]+"x") {
			t.Errorf("level %d %q is not anchored", i, levels[i])
		}
	}
}

func TestGroupsKeepWholeTestsApartFromSubtests(t *testing.T) {
	sel := []mapTest{
		{Judge: "leases", Path: []string{"TestA"}, Seconds: 2},
		{Judge: "leases/contract", Path: []string{"TestPostgres", "steward", "X"}, Seconds: 5},
		{Judge: "leases", Path: []string{"TestB"}, Seconds: 1},
		{Judge: "leases/contract", Path: []string{"TestSQLite", "steward"}, Seconds: 0.5},
		{Judge: "leases/contract", Path: []string{"TestPostgres", "seed", "Y"}, Seconds: 4},
		{Judge: "leases/contract", Path: []string{"TestSQLite", "seed", "Z"}, Seconds: 0.2},
	}
	var got []string
	for _, g := range groups(sel) {
		got = append(got, g.judge+" "+runPattern(g.paths))
	}
	want := []string{
		"leases/contract ^(TestSQLite)$/^(seed)$/^(Z)$",
		"leases/contract ^(TestSQLite)$/^(steward)$",
		"leases ^(TestA|TestB)$",
		"leases/contract ^(TestPostgres)$/^(seed|steward)$/^(X|Y)$",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("groups, fastest first:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestSelectTestsByLine(t *testing.T) {
	m := &covMap{
		Blocks: []block{
			{File: "steward/leases/guard.go", StartLine: 10, StartCol: 2, EndLine: 14, EndCol: 3},
			{File: "steward/leases/guard.go", StartLine: 20, StartCol: 2, EndLine: 20, EndCol: 30},
			{File: "steward/leases/claim.go", StartLine: 10, StartCol: 2, EndLine: 14, EndCol: 3},
		},
		Tests: []mapTest{
			{Judge: "leases", Path: []string{"TestA"}, Blocks: []int{0}},
			{Judge: "leases", Path: []string{"TestB"}, Blocks: []int{1, 2}},
			{Judge: "leases", Path: []string{"TestC"}, Blocks: []int{0, 1}},
		},
	}
	name := func(ts []mapTest) (out []string) {
		for _, t := range ts {
			out = append(out, t.name())
		}
		return out
	}
	for _, c := range []struct {
		line int
		want []string
	}{{10, []string{"TestA", "TestC"}}, {14, []string{"TestA", "TestC"}}, {20, []string{"TestB", "TestC"}}, {15, nil}} {
		if got := name(selectTests(m, "steward/leases/guard.go", c.line)); !reflect.DeepEqual(got, c.want) {
			t.Errorf("line %d: %v, want %v", c.line, got, c.want)
		}
	}
}

func TestProfileLinesRoundTrip(t *testing.T) {
	b, n, err := parseProfileLine("steward/leases/guard.go:119.73,121.16 2 1")
	want := block{File: "steward/leases/guard.go", StartLine: 119, StartCol: 73, EndLine: 121, EndCol: 16, Statements: 2}
	if err != nil || n != 1 || b != want {
		t.Fatalf("%+v %d %v", b, n, err)
	}
	for _, bad := range []string{"guard.go 2 1", "x.go:1.2,3 1 1", "x.go:1.2,3.4 a 1"} {
		if _, _, err := parseProfileLine(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
	m := &covMap{Blocks: []block{want, {File: "steward/leases/guard.go", StartLine: 1, StartCol: 1, EndLine: 2, EndCol: 2, Statements: 1}},
		Tests: []mapTest{{Blocks: []int{0}}}}
	if got := string(mergedProfile(m)); got != "mode: set\nsteward/leases/guard.go:119.73,121.16 2 1\nsteward/leases/guard.go:1.1,2.2 1 0\n" {
		t.Errorf("merged profile:\n%s", got)
	}
}

func TestDeepestFailureNamesTheFailingCheck(t *testing.T) {
	out := []byte(`--- FAIL: TestSQLite (0.51s)
    --- FAIL: TestSQLite/steward (0.51s)
        --- FAIL: TestSQLite/steward/ReclaimWaits (0.02s)
            contract.go:253: reclaim 1µs before the expiry: code ok
    --- FAIL: TestSQLite/seed (1.86s)
        --- FAIL: TestSQLite/seed/ReclaimWaits (0.12s)
FAIL
`)
	if got := deepestFailure(out); got != "TestSQLite/steward/ReclaimWaits" {
		t.Errorf("%q", got)
	}
}

func TestSurvivorRowsReadBack(t *testing.T) {
	for _, text := range []string{"if a || b {", "x := `raw` + y", "plain"} {
		row := "| `leases/guard.go` | `CONDITIONALS_NEGATION` | 7 | " + codeCell(text) + " | it cannot be told apart |"
		cells := splitRow(row)
		if len(cells) != 5 || cells[0] != "leases/guard.go" || cells[1] != "CONDITIONALS_NEGATION" || cells[2] != "7" ||
			cells[3] != text || cells[4] != "it cannot be told apart" {
			t.Errorf("%q read back as %q", row, cells)
		}
	}
}

// TestHangSetting: a judging run's time limit is 3 minutes unless STEWARD_MUTATION_HANG
// gives another; a value that is not a positive duration is an error, never a default.
func TestHangSetting(t *testing.T) {
	src := t.TempDir()
	if err := os.WriteFile(filepath.Join(src, "go.mod"), []byte("module steward\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{"STEWARD_MUTATION_GO": "go", "STEWARD_MUTATION_SRC": src,
		"STEWARD_MUTATION_TARGET": "leases", "STEWARD_MUTATION_STATE": t.TempDir()} {
		t.Setenv(k, v)
	}
	for _, c := range []struct {
		v    string
		want time.Duration
		err  bool
	}{{"", 3 * time.Minute, false}, {"90s", 90 * time.Second, false}, {"0s", 0, true}, {"soon", 0, true}} {
		t.Setenv("STEWARD_MUTATION_HANG", c.v)
		s, err := loadSetup()
		if (err != nil) != c.err || !c.err && s.hang != c.want {
			t.Errorf("STEWARD_MUTATION_HANG=%q: %v (%v), want %v (error %v)", c.v, s.hang, err, c.want, c.err)
		}
	}
}
