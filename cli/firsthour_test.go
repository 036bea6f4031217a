package cli

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"steward/model"
)

// The first hour of a new user, on the built binary: a fresh clone, the README's install
// line, `steward version`, and the README's command-line examples run as written against
// the demo workspace they keep. Every other `steward …` command of the README and docs/
// parses (its command and flags exist), and the docs' commands that create files under
// ~/.config/steward/ work when that folder does not exist yet.

// sourceRoot is the module's directory (this test's file is in cli/).
func sourceRoot(t *testing.T) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(filepath.Dir(file))
}

// freshClone clones the repository the tests run from into dir — with the work tree's
// changes not committed yet applied on top, so that a run before a commit tests what is
// there — and returns its HEAD and whether changes were applied.
func freshClone(t *testing.T, dir string) (head string, dirty bool) {
	t.Helper()
	src := sourceRoot(t)
	git := func(d string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", d}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("git %v: %v", args, err)
		}
		return string(out)
	}
	head = strings.TrimSpace(git(src, "rev-parse", "HEAD"))
	if out, err := exec.Command("git", "clone", "-q", src, dir).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	if got := strings.TrimSpace(git(dir, "rev-parse", "HEAD")); got != head {
		t.Fatalf("the clone is at %s, the source at %s", got, head)
	}
	diff := git(src, "diff", "HEAD", "--binary")
	if diff != "" {
		apply := exec.Command("git", "-C", dir, "apply", "--whitespace=nowarn")
		apply.Stdin = strings.NewReader(diff)
		if out, err := apply.CombinedOutput(); err != nil {
			t.Fatalf("git apply: %v\n%s", err, out)
		}
		dirty = true
	}
	for _, f := range strings.Fields(git(src, "ls-files", "--others", "--exclude-standard")) {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
		dirty = true
	}
	return head, dirty
}

// fences are the fenced code blocks of a Markdown file, each with the prose line before it.
type fence struct {
	lang, before string
	lines        []string
}

func fences(t *testing.T, path string) []fence {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []fence
	var cur *fence
	var prose []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		l := sc.Text()
		tl := strings.TrimSpace(l)
		switch {
		case cur == nil && strings.HasPrefix(tl, "```"):
			cur = &fence{lang: strings.TrimPrefix(tl, "```"), before: strings.Join(prose, " ")}
			prose = nil
		case cur != nil && strings.HasPrefix(tl, "```"):
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			cur.lines = append(cur.lines, tl)
		case tl != "":
			prose = append(prose, tl)
		}
	}
	return out
}

// command splits a shell line into its command and its comment ("# …" after a space, not
// inside quotes).
func command(l string) (cmd, comment string) {
	in := rune(0)
	for i, r := range l {
		switch {
		case in != 0 && r == in:
			in = 0
		case in != 0:
		case r == '\'' || r == '"':
			in = r
		case r == '#' && (i == 0 || l[i-1] == ' '):
			return strings.TrimSpace(l[:i]), strings.TrimSpace(l[i+1:])
		}
	}
	return strings.TrimSpace(l), ""
}

var exitIn = regexp.MustCompile(`\(exit (\d)\)`)

// TestReadmeRunsAsWritten: a new user's first hour on the built binary. A fresh clone of the
// repository; the README's install block run as written (`go install .` into a GOBIN of its
// own, then `steward version`, which names the module and the clone's VCS revision); then
// every command of the README's command-line examples, run by a shell as written, on the
// demo workspace the first of them keeps, after the `export` line that demo printed — each
// exits as its comment says (0 unless it says "(exit N)"), and the viewer's recover preview
// shows its plan beside its refusal. Before, there was no install line, `steward version`
// and `--version` were unknown, the examples named items no workspace held, and the first of
// them was refused for the default role without saying so.
func TestReadmeRunsAsWritten(t *testing.T) {
	tmp := t.TempDir()
	clone := filepath.Join(tmp, "steward")
	head, dirty := freshClone(t, clone)
	home, bin := filepath.Join(tmp, "home"), filepath.Join(tmp, "bin")
	for _, d := range []string{home, bin} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// A home of its own, but this machine's Go caches: the modules are not fetched again.
	goenv, err := exec.Command("go", "env", "GOMODCACHE", "GOCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	caches := strings.Fields(string(goenv))
	env := append(cleanEnv(t), "HOME="+home, "GOBIN="+bin, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"GOMODCACHE="+caches[0], "GOCACHE="+caches[1], "GOFLAGS=-buildvcs=auto", "GOPROXY=off", "TMPDIR="+tmp,
		"STEWARD_NOTIFY_BELL=false", "STEWARD_NOTIFY_DESKTOP=false")
	sh := func(line string) (string, int) {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "sh", "-c", line)
		cmd.Dir, cmd.Env = clone, env
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		return string(out), code
	}
	fs := fences(t, filepath.Join(clone, "README.md"))
	if len(fs) == 0 || !strings.Contains(fs[0].before, "Install") {
		t.Fatalf("the README's first code block is not the install (it follows %q)", firstOr(fs))
	}
	ran := map[string]bool{}
	for _, l := range fs[0].lines {
		c, comment := command(l)
		if c == "" || strings.HasPrefix(c, "steward demo") { // the workbench: below, headless
			continue
		}
		out, code := sh(c)
		if code != 0 {
			t.Fatalf("install block: %s (%s): exit %d\n%s", c, comment, code, out)
		}
		ran[strings.Fields(c)[0]+" "+strings.Fields(c)[1]] = true
		if c == "steward version" {
			if !strings.HasPrefix(out, "steward ") || !strings.Contains(out, "revision "+head) || strings.Contains(out, "with changes not committed") != dirty {
				t.Errorf("steward version says %q; want the module and revision %s (changes not committed: %v)", out, head, dirty)
			}
		}
	}
	if !ran["go install"] || !ran["steward version"] {
		t.Fatalf("the install block does not install and check the version: %v", fs[0].lines)
	}
	if out, code := sh("steward --version"); code != 0 || !strings.Contains(out, "revision "+head) {
		t.Errorf("steward --version: exit %d, %q", code, out)
	}

	var walk *fence
	for i := range fs {
		if strings.Contains(fs[i].before, "To try each command as written") {
			walk = &fs[i]
		}
	}
	if walk == nil || len(walk.lines) < 5 {
		t.Fatal("the README has no command-line examples to try as written")
	}
	exports := ""
	for i, l := range walk.lines {
		c, comment := command(l)
		if !strings.HasPrefix(c, "steward ") {
			t.Errorf("example %q is not a steward command", l)
			continue
		}
		want := "0"
		if m := exitIn.FindStringSubmatch(comment); m != nil {
			want = m[1]
		}
		if !strings.Contains(comment, "viewer") && !strings.Contains(comment, "operator") && !strings.Contains(c, "--as-role") && i > 0 {
			t.Errorf("example %q does not state the role it needs", l)
		}
		out, code := sh(exports + c)
		if got := string(rune('0' + code)); got != want {
			t.Errorf("%s\n  exit %d, the README says %s:\n%s", c, code, want, out)
			continue
		}
		if i == 0 {
			for _, ol := range strings.Split(out, "\n") {
				if strings.HasPrefix(strings.TrimSpace(ol), "export STEWARD_CONFIG=") {
					exports = strings.TrimSpace(ol) + "; "
				}
			}
			if !strings.Contains(exports, " ITEM=") || !strings.Contains(exports, " LEASE=") {
				t.Fatalf("the kept demo printed no export line with a claim to try:\n%s", out)
			}
		}
		if strings.Contains(c, "recover") && strings.Contains(c, "--dry-run") && !strings.Contains(c, "--as-role") {
			for _, w := range []string{"refused  role_too_low", "step 1 of", "lease.", "lock.retire"} {
				if !strings.Contains(out, w) {
					t.Errorf("the viewer's recover preview does not show %q:\n%s", w, out)
				}
			}
		}
	}
}

func firstOr(fs []fence) string {
	if len(fs) == 0 {
		return "nothing"
	}
	return fs[0].before
}

// shellSplit splits a documented command into words: quotes taken as written, $VAR and ~
// kept as text (the parse check needs only the command and its flags), optional parts in
// brackets ([--level 1]) left out.
func shellSplit(line string) []string {
	var words []string
	var cur strings.Builder
	in, has, depth := rune(0), false, 0
	for _, r := range line {
		switch {
		case in != 0 && r == in:
			in = 0
		case in != 0:
			cur.WriteRune(r)
		case r == '[':
			depth++
		case r == ']' && depth > 0:
			depth--
		case depth > 0:
		case r == '\'' || r == '"':
			in, has = r, true
		case r == ' ' || r == '\t':
			if has {
				words = append(words, cur.String())
				cur.Reset()
				has = false
			}
		default:
			cur.WriteRune(r)
			has = true
		}
	}
	if has {
		words = append(words, cur.String())
	}
	return words
}

// TestDocsCommandsParse: every `steward …` command in a shell block of the README and of
// docs/ names a command steward has, with flags it takes and no argument it refuses — a
// reader can paste each one. (The README's examples also run, TestReadmeRunsAsWritten; the
// ones that need a PostgreSQL server or a Gitea of their own can only be parsed here.)
func TestDocsCommandsParse(t *testing.T) {
	root := sourceRoot(t)
	files, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	files = append(files, filepath.Join(root, "README.md"))
	n := 0
	for _, f := range files {
		for _, fc := range fences(t, f) {
			if fc.lang != "sh" && fc.lang != "bash" && fc.lang != "console" && fc.lang != "" {
				continue
			}
			for _, l := range fc.lines {
				l = strings.TrimPrefix(l, "$ ")
				c, _ := command(l)
				for _, part := range strings.Split(c, "&&") {
					part = strings.TrimSpace(part)
					if !strings.HasPrefix(part, "steward ") {
						continue
					}
					n++
					args := shellSplit(part)[1:]
					cmd, rest, err := newRoot(io.Discard, io.Discard).Find(args)
					if err == nil {
						err = cmd.ParseFlags(rest)
					}
					if err == nil && cmd.Args != nil {
						err = cmd.ValidateArgs(cmd.Flags().Args())
					}
					if err == nil && !cmd.Runnable() {
						err = fmt.Errorf("%q is a group, not a command", cmd.CommandPath())
					}
					if err != nil {
						t.Errorf("%s: %q: %v", filepath.Base(f), part, err)
					}
				}
			}
		}
	}
	if n < 20 {
		t.Fatalf("only %d steward commands found in the docs", n)
	}
	t.Logf("%d documented steward commands parse", n)
}

// TestDocsConfigFolderCommands: the docs' commands that create a file in ~/.config/steward/
// (the MCP token, the PostgreSQL password) work, as written, for a user whose folder does
// not exist yet, and leave the file mode 0600 in a folder of mode 0700. Before, `install
// -m 600 /dev/null ~/.config/steward/mcp.token` failed there ("No such file or directory").
func TestDocsConfigFolderCommands(t *testing.T) {
	root := sourceRoot(t)
	files, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	n := 0
	for _, f := range files {
		for _, fc := range fences(t, f) {
			if fc.lang != "sh" && fc.lang != "bash" {
				continue
			}
			for _, l := range fc.lines {
				c, _ := command(l)
				if strings.HasPrefix(c, "steward ") || !strings.Contains(c, "~/.config/steward/") {
					continue
				}
				home := t.TempDir()
				cmd := exec.Command("sh", "-c", c)
				cmd.Env = append(cleanEnv(t), "HOME="+home, "EDITOR=true")
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Errorf("%s: %q in a home without ~/.config/steward: %v\n%s", filepath.Base(f), c, err, out)
					continue
				}
				n++
				made, _ := filepath.Glob(filepath.Join(home, ".config", "steward", "*"))
				if len(made) != 1 {
					t.Errorf("%q made %v", c, made)
					continue
				}
				fi, err := os.Stat(made[0])
				if err != nil || fi.Mode().Perm() != 0o600 {
					t.Errorf("%q: %s has mode %v, want 0600", c, made[0], fi.Mode().Perm())
				}
				if di, err := os.Stat(filepath.Dir(made[0])); err != nil || di.Mode().Perm()&0o077 != 0 {
					t.Errorf("%q: the folder is open to others: %v", c, di.Mode().Perm())
				}
			}
		}
	}
	if n < 2 {
		t.Fatalf("ran %d such commands; the MCP token and the PostgreSQL password steps were expected", n)
	}
}

// TestRecoveryHasARunbookPerContentionKind: docs/recovery.md has the runbook every
// contention entry's `next.runbook` names, one section per kind.
func TestRecoveryHasARunbookPerContentionKind(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(sourceRoot(t), "docs", "recovery.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range model.ContentionKinds {
		if !strings.Contains(string(b), "\n### contention: "+string(k)+"\n") || !strings.HasSuffix(model.RunbookOf(k), "#contention-"+string(k)) {
			t.Errorf("no runbook for %s in docs/recovery.md (next.runbook says %s)", k, model.RunbookOf(k))
		}
	}
}
