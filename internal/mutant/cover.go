package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// block is one coverage block of the target package, as go test's profiles name it.
type block struct {
	File                        string // import path and file name: "steward/leases/guard.go"
	StartLine, StartCol         int
	EndLine, EndCol, Statements int
}

func (b block) key() string {
	return fmt.Sprintf("%s:%d.%d,%d.%d", b.File, b.StartLine, b.StartCol, b.EndLine, b.EndCol)
}

// covers reports whether the block spans line of file.
func (b block) covers(file string, line int) bool {
	return b.File == file && b.StartLine <= line && line <= b.EndLine
}

// mapTest is one test of the map: a top-level test, or a subtest of a slow one.
type mapTest struct {
	Judge string // the package dir whose test binary runs it ("leases/contract")
	// Path is its name, one element per level: ["TestPostgres", "steward", "ClaimRefusals"];
	// none stands for every test of the judge but the kept-out ones (the whole selection).
	Path    []string
	Seconds float64 // how long it ran alone, on the unmutated source
	Blocks  []int   // the blocks of the target it covers (indices into covMap.Blocks)
}

func (t mapTest) name() string {
	if t.Path == nil {
		return "(every test)"
	}
	return strings.Join(t.Path, "/")
}

// covMap is the per-test coverage map of one target package.
type covMap struct {
	Target  string
	Judges  []string
	KeptOut []string // top-level tests left out of the run
	Blocks  []block
	Tests   []mapTest
}

const mapFile = "map.json"

// coverageStep stands in for gremlins' coverage run: it builds the map and writes the
// union of the covered blocks to the profile gremlins reads.
func coverageStep(args []string) error {
	s, err := loadSetup()
	if err != nil {
		return err
	}
	profile := flagValue(args, "-coverprofile")
	if profile == "" {
		return errors.New("no -coverprofile file in " + strings.Join(args, " "))
	}
	m, err := buildMap(s, flagValue(args, "-tags"))
	if err != nil {
		return err
	}
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(s.state, mapFile), b, 0o644); err != nil {
		return err
	}
	return os.WriteFile(profile, mergedProfile(m), 0o644)
}

// mergedProfile is a "mode: set" profile with every block of m, counted 1 when some test
// covers it.
func mergedProfile(m *covMap) []byte {
	covered := make([]bool, len(m.Blocks))
	for _, t := range m.Tests {
		for _, i := range t.Blocks {
			covered[i] = true
		}
	}
	var out bytes.Buffer
	out.WriteString("mode: set\n")
	for i, b := range m.Blocks {
		n := 0
		if covered[i] {
			n = 1
		}
		fmt.Fprintf(&out, "%s %d %d\n", b.key(), b.Statements, n)
	}
	return out.Bytes()
}

type mapBuilder struct {
	s      setup
	m      *covMap
	index  map[string]int // block key -> index in m.Blocks
	dir    string         // where the coverage binaries and profiles go
	report *os.File       // map.txt: one line per test
}

func buildMap(s setup, tags string) (*covMap, error) {
	b := &mapBuilder{s: s, m: &covMap{Target: s.target, Judges: s.judges}, index: map[string]int{},
		dir: filepath.Join(s.state, "cover")}
	if err := os.MkdirAll(b.dir, 0o755); err != nil {
		return nil, err
	}
	rep, err := os.Create(filepath.Join(s.state, "map.txt"))
	if err != nil {
		return nil, err
	}
	defer rep.Close()
	b.report = rep
	for ji, judge := range s.judges {
		bin := filepath.Join(b.dir, fmt.Sprintf("judge%d.test", ji))
		cmdArgs := []string{"test", "-c", "-o", bin, "-cover", "-covermode=set", "-coverpkg=" + s.importPath(s.target)}
		if tags != "" {
			cmdArgs = append(cmdArgs, "-tags", tags)
		}
		cmdArgs = append(cmdArgs, "./"+judge)
		build := exec.Command(s.realGo, cmdArgs...)
		build.Dir = s.src
		if out, err := build.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("building %s's tests with coverage: %v\n%s", judge, err, out)
		}
		if _, err := os.Stat(bin); err != nil {
			continue // a package without tests
		}
		if !s.perTest {
			if err := b.addWhole(judge, bin); err != nil {
				return nil, err
			}
			continue
		}
		list := exec.Command(bin, "-test.list", ".")
		list.Dir = filepath.Join(s.src, judge)
		out, err := list.Output()
		if err != nil {
			return nil, fmt.Errorf("listing %s's tests: %v", judge, err)
		}
		for _, name := range strings.Fields(string(out)) {
			if strings.HasPrefix(name, "Benchmark") {
				continue
			}
			if s.keepOut != nil && s.keepOut.MatchString(name) {
				b.m.KeptOut = append(b.m.KeptOut, judge+" "+name)
				fmt.Fprintf(b.report, "%-18s %-70s kept out\n", judge, name)
				continue
			}
			if err := b.add(judge, bin, []string{name}); err != nil {
				return nil, err
			}
		}
	}
	if len(b.m.Tests) == 0 {
		return nil, errors.New("no test of " + strings.Join(s.judges, ", ") + " covers " + s.target)
	}
	return b.m, nil
}

// addWhole runs every test of the judge but the kept-out ones, once, and records it as one
// entry.
func (b *mapBuilder) addWhole(judge, bin string) error {
	secs, _, blocks, err := b.run(judge, bin, nil)
	if err != nil {
		return err
	}
	b.record(judge, nil, secs, blocks)
	return nil
}

// add runs the test at path alone and records what it covers; a test slower than the
// split threshold with two or more subtests is recorded per subtest instead.
func (b *mapBuilder) add(judge, bin string, path []string) error {
	secs, results, blocks, err := b.run(judge, bin, path)
	if err != nil {
		return err
	}
	if secs > b.s.split {
		if kids := children(results, path); len(kids) >= 2 {
			saved := len(b.m.Tests)
			ok := true
			for _, k := range kids {
				sub := append(append([]string(nil), path...), k)
				ran, err := b.addChild(judge, bin, sub)
				if err != nil {
					return err
				}
				if !ran {
					ok = false
					break
				}
			}
			if ok {
				return nil
			}
			b.m.Tests = b.m.Tests[:saved] // a subtest could not be selected alone: keep the test whole
		}
	}
	b.record(judge, path, secs, blocks)
	return nil
}

// addChild is add for a subtest; ran is false when it cannot be judged alone: running it
// alone did not run it (a name the -run pattern cannot select), or failed (its parent
// checks something over all its subtests, as TestActions checks every action has a case).
func (b *mapBuilder) addChild(judge, bin string, path []string) (ran bool, err error) {
	secs, results, blocks, err := b.run(judge, bin, path)
	var red *redError
	if errors.As(err, &red) {
		fmt.Fprintf(b.report, "%-18s %-70s fails alone: kept in its parent\n", judge, strings.Join(path, "/"))
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if _, ok := results[strings.Join(path, "/")]; !ok {
		return false, nil
	}
	if secs > b.s.split {
		if kids := children(results, path); len(kids) >= 2 {
			saved := len(b.m.Tests)
			all := true
			for _, k := range kids {
				ok, err := b.addChild(judge, bin, append(append([]string(nil), path...), k))
				if err != nil {
					return false, err
				}
				if !ok {
					all = false
					break
				}
			}
			if all {
				return true, nil
			}
			b.m.Tests = b.m.Tests[:saved]
		}
	}
	b.record(judge, path, secs, blocks)
	return true, nil
}

func (b *mapBuilder) record(judge string, path []string, secs float64, blocks []block) {
	t := mapTest{Judge: judge, Path: path, Seconds: secs}
	for _, bl := range blocks {
		t.Blocks = append(t.Blocks, b.intern(bl))
	}
	fmt.Fprintf(b.report, "%-18s %-70s %7.2fs %5d blocks\n", judge, t.name(), secs, len(t.Blocks))
	if len(t.Blocks) > 0 {
		b.m.Tests = append(b.m.Tests, t)
	}
}

func (b *mapBuilder) intern(bl block) int {
	k := bl.key()
	if i, ok := b.index[k]; ok {
		return i
	}
	b.m.Blocks = append(b.m.Blocks, bl)
	b.index[k] = len(b.m.Blocks) - 1
	return len(b.m.Blocks) - 1
}

// run runs one test (or subtest) alone with a coverage profile. It fails when the test
// fails on the unmutated source: a mutation run needs a green suite.
func (b *mapBuilder) run(judge, bin string, path []string) (float64, map[string]string, []block, error) {
	prof := filepath.Join(b.dir, "profile.out")
	_ = os.Remove(prof)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	args := []string{"-test.count=1", "-test.v", "-test.coverprofile=" + prof, "-test.timeout=29m"}
	if path != nil {
		args = append(args, "-test.run", runPattern([][]string{path}))
	}
	if b.s.skip != "" {
		args = append(args, "-test.skip", b.s.skip)
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = filepath.Join(b.s.src, judge)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	secs := time.Since(start).Seconds()
	if err != nil {
		return 0, nil, nil, &redError{
			fmt.Errorf("%s %s fails on the unmutated source (%v): a mutation run needs a green suite\n%s",
				judge, strings.Join(path, "/"), err, tail(out, 40)),
		}
	}
	blocks, err := readProfile(prof, b.s.importPath(b.s.target))
	if err != nil {
		return 0, nil, nil, fmt.Errorf("%s %s: %v", judge, strings.Join(path, "/"), err)
	}
	return secs, testResults(out), blocks, nil
}

// redError is a test that fails on the unmutated source.
type redError struct{ error }

func (e *redError) Unwrap() error { return e.error }

var resultLine = regexp.MustCompile(`^\s*--- (PASS|FAIL|SKIP): (\S+) \(`)

// testResults maps every test and subtest name in -test.v output to PASS, FAIL or SKIP.
func testResults(out []byte) map[string]string {
	res := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	for sc.Scan() {
		if m := resultLine.FindStringSubmatch(sc.Text()); m != nil {
			res[m[2]] = m[1]
		}
	}
	return res
}

// children are the direct subtests of path that ran, in name order.
func children(results map[string]string, path []string) []string {
	prefix := strings.Join(path, "/") + "/"
	var kids []string
	for name := range results {
		if rest, ok := strings.CutPrefix(name, prefix); ok && !strings.Contains(rest, "/") {
			kids = append(kids, rest)
		}
	}
	sort.Strings(kids)
	return kids
}

// readProfile returns the covered blocks of pkg's files in a coverage profile.
func readProfile(path, pkg string) ([]block, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []block
	for _, line := range strings.Split(string(data), "\n") {
		if line == "" || strings.HasPrefix(line, "mode:") {
			continue
		}
		bl, count, err := parseProfileLine(line)
		if err != nil {
			return nil, err
		}
		if count > 0 && filepath.ToSlash(filepath.Dir(bl.File)) == pkg {
			out = append(out, bl)
		}
	}
	return out, nil
}

// parseProfileLine reads "file:startLine.startCol,endLine.endCol statements count".
func parseProfileLine(line string) (block, int, error) {
	bad := fmt.Errorf("profile line %q is not file:l.c,l.c n n", line)
	f := strings.Fields(line)
	if len(f) != 3 {
		return block{}, 0, bad
	}
	colon := strings.LastIndex(f[0], ":")
	if colon < 0 {
		return block{}, 0, bad
	}
	var b block
	b.File = f[0][:colon]
	if _, err := fmt.Sscanf(f[0][colon+1:], "%d.%d,%d.%d", &b.StartLine, &b.StartCol, &b.EndLine, &b.EndCol); err != nil {
		return block{}, 0, bad
	}
	n, err1 := strconv.Atoi(f[1])
	c, err2 := strconv.Atoi(f[2])
	if err1 != nil || err2 != nil {
		return block{}, 0, bad
	}
	b.Statements = n
	return b, c, nil
}

// runPattern is a -test.run pattern selecting the given test paths. Paths of one depth
// share a pattern level by level; over-selection (a/x with b/y also selecting a/y) runs
// more than asked, never less.
func runPattern(paths [][]string) string {
	depth := 0
	for _, p := range paths {
		depth = max(depth, len(p))
	}
	levels := make([]string, depth)
	for l := range depth {
		seen := map[string]bool{}
		var alts []string
		for _, p := range paths {
			if l < len(p) && !seen[p[l]] {
				seen[p[l]] = true
				alts = append(alts, regexp.QuoteMeta(p[l]))
			}
		}
		sort.Strings(alts)
		levels[l] = "^(" + strings.Join(alts, "|") + ")$"
	}
	return strings.Join(levels, "/")
}

func tail(b []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
