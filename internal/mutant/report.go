package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// gremlinsReport is the part of gremlins' -o output the report reads.
type gremlinsReport struct {
	Files []struct {
		FileName  string `json:"file_name"` // relative to the package gremlins ran in
		Mutations []struct {
			Type   string `json:"type"`
			Status string `json:"status"`
			Line   int    `json:"line"`
			Column int    `json:"column"`
		} `json:"mutations"`
	} `json:"files"`
}

// mutant is one mutant as the report counts it.
type mutant struct {
	File   string // relative to the module root
	Line   int
	Col    int
	Type   string
	Status string // KILLED, LIVED, TIMED OUT, NOT COVERED, NOT VIABLE, SKIPPED
	By     string // the test that killed it, from the shim's log
	Text   string // the source line, trimmed
	InCol  int    // Col within Text
}

// equivalent is one row of docs/mutation.md's table of surviving mutants.
type equivalent struct {
	File, Type, Text, Why string
	InCol                 int
	used                  bool
}

func report(args []string) int {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	src := fs.String("src", ".", "the module root")
	doc := fs.String("doc", "docs/mutation.md", "the document whose table lists the survivors that are accepted")
	full := fs.Bool(
		"full",
		false,
		"every mutant was run (not only changed lines): list documented survivors that no longer survive",
	)
	killers := fs.Bool("killers", false, "list every killed mutant with the test that killed it")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	eqs, err := readEquivalents(*doc)
	if err != nil {
		fmt.Fprintln(os.Stderr, "mutant report:", err)
		return 2
	}
	bad := false
	done := map[string]bool{}
	for _, a := range fs.Args() {
		pkg, dir, ok := strings.Cut(a, "=")
		if !ok {
			fmt.Fprintf(os.Stderr, "mutant report: %q is not package=run-directory\n", a)
			return 2
		}
		done[pkg] = true
		ms, infra, err := readRun(*src, pkg, dir)
		if err != nil {
			fmt.Fprintln(os.Stderr, "mutant report:", err)
			return 2
		}
		if printPackage(os.Stdout, pkg, ms, eqs, *killers) {
			bad = true
		}
		for _, e := range infra {
			fmt.Printf("  the tool failed on %s:%d: %s\n", e.File, e.Line, e.Error)
			bad = true
		}
	}
	if *full {
		for _, e := range eqs {
			if done[topDir(e.File)] && !e.used {
				fmt.Printf("  docs list a survivor that no longer survives (remove its row): %s %s col %d `%s`\n",
					e.File, e.Type, e.InCol, e.Text)
				bad = true
			}
		}
	}
	if bad {
		return 1
	}
	return 0
}

func topDir(file string) string { return filepath.ToSlash(filepath.Dir(file)) }

// readRun joins gremlins' results for package pkg with the shim's log in dir.
func readRun(src, pkg, dir string) ([]mutant, []logEntry, error) {
	b, err := os.ReadFile(filepath.Join(dir, "gremlins.json"))
	if err != nil {
		return nil, nil, err
	}
	var g gremlinsReport
	if err := json.Unmarshal(b, &g); err != nil {
		return nil, nil, fmt.Errorf("%s/gremlins.json: %v", dir, err)
	}
	logs, err := readLog(filepath.Join(dir, logFile))
	if err != nil {
		return nil, nil, err
	}
	var infra []logEntry
	byLine := map[string][]logEntry{}
	for _, e := range logs {
		if e.Result == "infra" {
			infra = append(infra, e)
			continue
		}
		k := e.File + ":" + strconv.Itoa(e.Line)
		byLine[k] = append(byLine[k], e)
	}
	lines := map[string][]string{}
	var ms []mutant
	for _, f := range g.Files {
		file := filepath.ToSlash(filepath.Join(pkg, f.FileName))
		if _, ok := lines[file]; !ok {
			data, err := os.ReadFile(filepath.Join(src, file))
			if err != nil {
				return nil, nil, err
			}
			lines[file] = strings.Split(string(data), "\n")
		}
		for _, x := range f.Mutations {
			m := mutant{File: file, Line: x.Line, Col: x.Column, Type: x.Type, Status: x.Status}
			if x.Line >= 1 && x.Line <= len(lines[file]) {
				raw := lines[file][x.Line-1]
				m.Text = strings.TrimSpace(raw)
				m.InCol = x.Column - (len(raw) - len(strings.TrimLeft(raw, " \t")))
			}
			for _, e := range byLine[file+":"+strconv.Itoa(x.Line)] {
				// The first differing byte is the token's, or the one after it when the
				// mutation only adds or drops a trailing '=' (< to <=, <= to <).
				if e.Col != x.Column && e.Col != x.Column+1 {
					continue
				}
				m.By = e.By
				if e.Result == "timed_out" {
					m.Status = "TIMED OUT"
				}
			}
			ms = append(ms, m)
		}
	}
	sort.Slice(ms, func(i, j int) bool {
		if ms[i].File != ms[j].File {
			return ms[i].File < ms[j].File
		}
		if ms[i].Line != ms[j].Line {
			return ms[i].Line < ms[j].Line
		}
		return ms[i].Col < ms[j].Col
	})
	return ms, infra, nil
}

func readLog(path string) ([]logEntry, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, nil // no mutant was run
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []logEntry
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
	for sc.Scan() {
		var e logEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		out = append(out, e)
	}
	return out, sc.Err()
}

// printPackage prints a package's figures and its survivors; it reports whether a
// survivor is not accepted in the document.
func printPackage(w *os.File, pkg string, ms []mutant, eqs []*equivalent, killers bool) bool {
	count := map[string]int{}
	var lived, timedOut []mutant
	for _, m := range ms {
		count[m.Status]++
		switch m.Status {
		case "LIVED":
			lived = append(lived, m)
		case "TIMED OUT":
			timedOut = append(timedOut, m)
		}
	}
	k, l := count["KILLED"], count["LIVED"]
	eff := "n/a"
	if k+l > 0 {
		eff = fmt.Sprintf("%.1f%%", 100*float64(k)/float64(k+l))
	}
	accepted := 0
	var unaccepted []mutant
	for _, m := range lived {
		if e := match(eqs, m); e != nil {
			e.used = true
			accepted++
		} else {
			unaccepted = append(unaccepted, m)
		}
	}
	fmt.Fprintf(
		w,
		"%s: efficacy %s = killed %d / (killed %d + survived %d); survived and listed in the doc %d; timed out %d, not "+
			"covered %d, not viable %d, not on changed lines %d\n",
		pkg,
		eff,
		k,
		k,
		l,
		accepted,
		count["TIMED OUT"],
		count["NOT COVERED"],
		count["NOT VIABLE"],
		count["SKIPPED"],
	)
	for _, m := range timedOut {
		fmt.Fprintf(w, "  timed out: %s:%d:%d %s `%s`\n", m.File, m.Line, m.Col, m.Type, m.Text)
	}
	if killers {
		for _, m := range ms {
			if m.Status == "KILLED" {
				fmt.Fprintf(w, "  killed: %s:%d:%d %s by %s\n", m.File, m.Line, m.Col, m.Type, m.By)
			}
		}
	}
	for _, m := range unaccepted {
		fmt.Fprintf(w, "  survived: %s:%d:%d %s `%s`\n", m.File, m.Line, m.Col, m.Type, m.Text)
	}
	if len(unaccepted) > 0 {
		fmt.Fprintf(w, "  kill each with a test, or add its row to the doc's table if no test can tell it apart:\n")
		for _, m := range unaccepted {
			fmt.Fprintf(w, "  | `%s` | `%s` | %d | %s | why |\n", m.File, m.Type, m.InCol, codeCell(m.Text))
		}
	}
	return len(unaccepted) > 0
}

func match(eqs []*equivalent, m mutant) *equivalent {
	for _, e := range eqs {
		if e.File == m.File && e.Type == m.Type && e.InCol == m.InCol && e.Text == m.Text {
			return e
		}
	}
	return nil
}

// eqHeading starts the table of accepted survivors in the document.
const eqHeading = "## Surviving mutants"

// readEquivalents reads the table under eqHeading: | `file` | `TYPE` | column | `line` | why |.
func readEquivalents(path string) ([]*equivalent, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []*equivalent
	in := false
	for i, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "## ") {
			in = strings.HasPrefix(line, eqHeading)
			continue
		}
		if !in || !strings.HasPrefix(line, "|") {
			continue
		}
		cells := splitRow(line)
		if len(cells) != 5 || cells[0] == "file" || strings.HasPrefix(cells[0], "---") {
			if len(cells) != 5 {
				return nil, fmt.Errorf(
					"%s:%d: a row of the survivors' table has %d cells, want 5",
					path,
					i+1,
					len(cells),
				)
			}
			continue
		}
		col, err := strconv.Atoi(cells[2])
		if err != nil {
			return nil, fmt.Errorf("%s:%d: column %q is not a number", path, i+1, cells[2])
		}
		if strings.TrimSpace(cells[4]) == "" || cells[4] == "why" {
			return nil, fmt.Errorf("%s:%d: the survivor %s line %q says no reason", path, i+1, cells[0], cells[3])
		}
		out = append(out, &equivalent{File: cells[0], Type: cells[1], InCol: col, Text: cells[3], Why: cells[4]})
	}
	return out, nil
}

// splitRow splits a Markdown table row on its unescaped pipes and takes the code spans'
// backticks off each cell.
func splitRow(line string) []string {
	line = strings.TrimSpace(line)
	line = strings.TrimPrefix(line, "|")
	line = strings.TrimSuffix(line, "|")
	var cells []string
	var cur strings.Builder
	for i := 0; i < len(line); i++ {
		switch {
		case line[i] == '\\' && i+1 < len(line) && line[i+1] == '|':
			cur.WriteByte('|')
			i++
		case line[i] == '|':
			cells = append(cells, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(line[i])
		}
	}
	cells = append(cells, cur.String())
	for i, c := range cells {
		cells[i] = uncode(strings.TrimSpace(c))
	}
	return cells
}

// uncode takes a code span's backticks off s: `x`, or “ x`y “ when x holds a backtick.
func uncode(s string) string {
	n := len(s) - len(strings.TrimLeft(s, "`"))
	if n == 0 || len(s) < 2*n || strings.Repeat("`", n) != s[len(s)-n:] {
		return s
	}
	s = s[n : len(s)-n]
	if n > 1 && len(s) >= 2 && s[0] == ' ' && s[len(s)-1] == ' ' {
		s = s[1 : len(s)-1]
	}
	return s
}

// codeCell is s as a code span in a table cell (uncode and splitRow read it back).
func codeCell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	if strings.Contains(s, "`") {
		return "`` " + s + " ``"
	}
	return "`" + s + "`"
}
