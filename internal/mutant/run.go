package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/scanner"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"time"
)

// logFile is the run's log of mutants: one JSON object a line (logEntry).
const logFile = "mutants.jsonl"

// logEntry is what the shim learnt about one mutant.
type logEntry struct {
	File    string  `json:"file"` // relative to the module root: "leases/guard.go"
	Line    int     `json:"line"`
	Col     int     `json:"col"` // the first byte that differs, 1-based
	Was     string  `json:"was"` // the line before and after the mutation, trimmed
	Now     string  `json:"now"`
	Result  string  `json:"result"` // killed, lived, not_viable, timed_out, infra
	By      string  `json:"by,omitempty"`
	Tests   int     `json:"tests"`
	Seconds float64 `json:"seconds"`
	Error   string  `json:"error,omitempty"`
}

// mutantStep stands in for gremlins' "go test -timeout T -failfast pkg", run in the
// package's directory of a copy of the module holding one mutant.
func mutantStep(args []string) int {
	start := time.Now()
	e := logEntry{Result: "infra"}
	code := func() int {
		s, err := loadSetup()
		if err != nil {
			e.Error = err.Error()
			return exitInfra
		}
		defer func() { e.Seconds = time.Since(start).Seconds(); appendLog(s, e) }()
		pkg := args[len(args)-1]
		dir := "."
		if pkg != s.module {
			var ok bool
			if dir, ok = strings.CutPrefix(pkg, s.module+"/"); !ok {
				e.Error = "package " + pkg + " is not in module " + s.module
				return exitInfra
			}
		}
		cwd, err := os.Getwd()
		if err != nil {
			e.Error = err.Error()
			return exitInfra
		}
		root := moduleRoot(cwd)
		if root == "" || sameDir(root, s.src) {
			e.Error = "not in a copy of the module: " + cwd
			return exitInfra
		}
		file, line, col, was, now, err := findMutant(root, s.src, dir)
		if err != nil {
			e.Error = err.Error()
			return exitInfra
		}
		e.File, e.Line, e.Col, e.Was, e.Now = file, line, col, was, now
		m, err := loadMap(s)
		if err != nil {
			e.Error = err.Error()
			return exitInfra
		}
		sel := selectTests(m, s.importPath(dir)+"/"+filepath.Base(file), line)
		if len(sel) == 0 {
			sel = m.Tests // gremlins saw it covered at a column the line rule missed: run them all
		}
		e.Tests = len(sel)
		deadline := time.Duration(0)
		for _, t := range sel {
			deadline += time.Duration(t.Seconds * float64(time.Second))
		}
		// Generous: the machine's load moves, and the builds come on top.
		deadline = 4*deadline + 3*time.Minute
		ctx, cancel := context.WithTimeout(context.Background(), deadline)
		defer cancel()
		res, by, err := judge(ctx, s, root, flagValue(args, "-tags"), sel)
		e.Result, e.By = res, by
		if err != nil {
			e.Error = err.Error()
		}
		switch res {
		case "killed", "timed_out":
			// A timed-out mutant exits as killed so gremlins moves on at once; the report
			// reads this log and counts it as timed out.
			return 1
		case "not_viable":
			return 2
		case "lived":
			return 0
		}
		return exitInfra
	}()
	if e.Error != "" && e.Result == "infra" {
		fmt.Fprintln(os.Stderr, "mutant:", e.Error)
	}
	return code
}

func appendLog(s setup, e logEntry) {
	b, _ := json.Marshal(e)
	f, err := os.OpenFile(filepath.Join(s.state, logFile), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, "mutant: log:", err)
		return
	}
	defer f.Close()
	_, _ = f.Write(append(b, '\n'))
}

func moduleRoot(dir string) string {
	for {
		if st, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil && !st.IsDir() {
			return dir
		}
		up := filepath.Dir(dir)
		if up == dir {
			return ""
		}
		dir = up
	}
}

func sameDir(a, b string) bool {
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}

// findMutant compares the package's non-test Go files in the copy with the source and
// returns the one line that differs.
func findMutant(root, src, dir string) (file string, line, col int, was, now string, err error) {
	names, err := filepath.Glob(filepath.Join(root, dir, "*.go"))
	if err != nil {
		return "", 0, 0, "", "", err
	}
	found := 0
	for _, p := range names {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		rel := filepath.Join(dir, filepath.Base(p))
		mut, err1 := os.ReadFile(p)
		orig, err2 := os.ReadFile(filepath.Join(src, rel))
		if err1 != nil || err2 != nil {
			return "", 0, 0, "", "", errors.Join(err1, err2)
		}
		if bytes.Equal(mut, orig) {
			continue
		}
		l, c, w, n := firstDifference(orig, mut)
		if l == 0 {
			continue // reformatted only (a mutant of another file was rolled back through go/printer)
		}
		found++
		file, line, col, was, now = rel, l, c, w, n
	}
	if found != 1 {
		return "", 0, 0, "", "", fmt.Errorf("%d files of %s differ from the source, want 1", found, dir)
	}
	return file, line, col, was, now, nil
}

// firstDifference is the position (1-based line and column, in a) of the first token
// where b differs from a, with that line of each, trimmed. Tokens, not bytes: gremlins
// writes the mutated file through go/printer, whose alignment differs from gofmt's.
func firstDifference(a, b []byte) (line, col int, was, now string) {
	fa, fb := token.NewFileSet(), token.NewFileSet()
	var sa, sb scanner.Scanner
	sa.Init(fa.AddFile("a", -1, len(a)), a, nil, 0)
	sb.Init(fb.AddFile("b", -1, len(b)), b, nil, 0)
	for {
		pa, ta, la := sa.Scan()
		pb, tb, lb := sb.Scan()
		if ta == tb && la == lb && ta != token.EOF {
			continue
		}
		if ta == token.EOF && tb == token.EOF {
			return 0, 0, "", ""
		}
		p, q := fa.Position(pa), fb.Position(pb)
		return p.Line, p.Column, lineOf(a, p.Line), lineOf(b, q.Line)
	}
}

func lineOf(src []byte, n int) string {
	lines := strings.Split(string(src), "\n")
	if n < 1 || n > len(lines) {
		return ""
	}
	return strings.TrimSpace(lines[n-1])
}

func loadMap(s setup) (*covMap, error) {
	b, err := os.ReadFile(filepath.Join(s.state, mapFile))
	if err != nil {
		return nil, err
	}
	var m covMap
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	return &m, nil
}

// selectTests are the tests of m covering line of file ("steward/leases/guard.go").
func selectTests(m *covMap, file string, line int) []mapTest {
	hit := map[int]bool{}
	for i, b := range m.Blocks {
		if b.covers(file, line) {
			hit[i] = true
		}
	}
	var out []mapTest
	for _, t := range m.Tests {
		for _, i := range t.Blocks {
			if hit[i] {
				out = append(out, t)
				break
			}
		}
	}
	return out
}

// group is one test binary run: the tests of one judge that one -test.run pattern selects.
type group struct {
	judge   string
	paths   [][]string
	seconds float64
}

// groups splits the selected tests into runs: a judge's whole tests together, and the
// subtests of each split test, per depth, by themselves (a pattern with a second level
// would filter the subtests of every whole test). Fastest first.
func groups(sel []mapTest) []group {
	idx := map[string]int{}
	var gs []group
	for _, t := range sel {
		key := t.Judge + "\x00"
		if t.Path == nil {
			key += "every"
		} else if len(t.Path) > 1 {
			key += t.Path[0] + "\x00" + fmt.Sprint(len(t.Path))
		}
		i, ok := idx[key]
		if !ok {
			i = len(gs)
			idx[key] = i
			gs = append(gs, group{judge: t.Judge})
		}
		gs[i].paths = append(gs[i].paths, t.Path)
		gs[i].seconds += t.Seconds
	}
	sort.SliceStable(gs, func(i, j int) bool { return gs[i].seconds < gs[j].seconds })
	return gs
}

var failLine = regexp.MustCompile(`(?m)^\s*--- FAIL: (\S+)`)

// judge builds the judges' test binaries in the mutated copy and runs the selected tests,
// fastest group first, until one fails.
func judge(ctx context.Context, s setup, root, tags string, sel []mapTest) (result, by string, err error) {
	tmp, err := os.MkdirTemp("", "mutant-")
	if err != nil {
		return "infra", "", err
	}
	defer os.RemoveAll(tmp)
	bins := map[string]string{}
	for _, g := range groups(sel) {
		bin, ok := bins[g.judge]
		if !ok {
			bin = filepath.Join(tmp, fmt.Sprintf("j%d.test", len(bins)))
			args := []string{"test", "-c", "-o", bin}
			if tags != "" {
				args = append(args, "-tags", tags)
			}
			args = append(args, "./"+g.judge)
			out, code, err := runChild(ctx, root, s.realGo, args...)
			if ctx.Err() != nil {
				return "timed_out", "building " + g.judge, nil
			}
			if err != nil || code != 0 {
				return "not_viable", "", fmt.Errorf("%s does not build: %s", g.judge, tail(out, 5))
			}
			bins[g.judge] = bin
		}
		args := []string{"-test.failfast", "-test.count=1", "-test.timeout=" + s.hang.String()}
		if g.paths[0] != nil {
			args = append(args, "-test.run", runPattern(g.paths))
		}
		if s.skip != "" {
			args = append(args, "-test.skip", s.skip)
		}
		out, code, err := runChild(ctx, filepath.Join(root, g.judge), bin, args...)
		if ctx.Err() != nil {
			return "timed_out", g.judge, nil
		}
		if err != nil {
			return "infra", "", err
		}
		if code != 0 {
			by := g.judge
			if name := deepestFailure(out); name != "" {
				by += " " + name
			} else {
				by += " exit " + fmt.Sprint(code) + ": " + firstLine(out, "panic:")
			}
			return "killed", by, nil
		}
	}
	return "lived", "", nil
}

// deepestFailure is the innermost failed test of the first failing top-level test in go
// test's output: the one whose check failed, not its parents.
func deepestFailure(out []byte) string {
	best := ""
	for _, m := range failLine.FindAllSubmatch(out, -1) {
		name := string(m[1])
		if best == "" || strings.HasPrefix(name, best+"/") {
			best = name
		}
	}
	return best
}

func firstLine(out []byte, prefix string) string {
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return strings.TrimSpace(tail(out, 1))
}

// runChild runs a command in dir and returns its output and exit code. The child dies
// with this process (Pdeathsig on the locked thread that started it), so a run gremlins
// kills at its own deadline leaves nothing behind; at ctx's deadline its whole process
// group is killed.
func runChild(ctx context.Context, dir, name string, args ...string) ([]byte, int, error) {
	type result struct {
		out  []byte
		code int
		err  error
	}
	done := make(chan result, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		var buf bytes.Buffer
		cmd.Stdout, cmd.Stderr = &buf, &buf
		cmd.SysProcAttr = childAttr()
		if err := cmd.Start(); err != nil {
			done <- result{err: err}
			return
		}
		waited := make(chan error, 1)
		go func() { waited <- cmd.Wait() }()
		select {
		case err := <-waited:
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code, err = ee.ExitCode(), nil
				if code < 0 {
					code = 128 // killed by a signal: a failure, as go test reports it
				}
			}
			done <- result{out: buf.Bytes(), code: code, err: err}
		case <-ctx.Done():
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-waited
			done <- result{out: buf.Bytes(), code: -1}
		}
	}()
	r := <-done
	return r.out, r.code, r.err
}
