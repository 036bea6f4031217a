package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"steward/govern"
	"steward/tui"
)

// Nothing fails silently: a named file that is not there, an entry that does not exist, a
// database scheme steward cannot read, a history with nothing read, a workbench with no
// workspace, a demo given flags it would ignore — each says so, and exits so.

// emptyConfig is an empty config file (mode 0600) in dir: a command that names it runs on
// the defaults, the flags and the variables — a file named by --config must exist.
func emptyConfig(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "empty-config.yaml")
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func runSplit(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Main(args, &out, &errb)
	return code, out.String(), errb.String()
}

// TestNamedConfigMustExist: a config file named by --config or STEWARD_CONFIG that does not
// exist is an error naming it, for every command (audit printed "no attempts recorded" and
// exited 0 on the defaults before); the default place may be absent.
func TestNamedConfigMustExist(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope.yaml")
	for _, args := range [][]string{{"--config", missing, "audit"}, {"--config", missing, "status", "--no-gitea"}, {"--config", missing, "config", "check", "--offline"}} {
		code, out, errs := runSplit(t, args...)
		if code != ExitError || !strings.Contains(out+errs, "config-missing") || !strings.Contains(out+errs, missing) {
			t.Errorf("%v: exit %d\n%s%s", args, code, out, errs)
		}
		if strings.Contains(out, "no attempts recorded") {
			t.Errorf("%v still reports on the defaults:\n%s", args, out)
		}
	}
	t.Setenv("STEWARD_CONFIG", missing)
	if code, _, errs := runSplit(t, "audit"); code != ExitError || !strings.Contains(errs, "STEWARD_CONFIG") {
		t.Errorf("STEWARD_CONFIG naming a missing file: exit %d %s", code, errs)
	}
	os.Unsetenv("STEWARD_CONFIG")
	if code, _, errs := runSplit(t, "audit", "--audit", filepath.Join(t.TempDir(), "a.jsonl")); code != ExitOK {
		t.Errorf("no config file at the default place: exit %d %s", code, errs)
	}
}

// TestAttentionAckNeedsAnEntry: `attention ack|snooze` of an entry that does not exist now
// is refused not_found and leaves no mark (it succeeded and was recorded before); `steward
// attention list` shows the entries with the key and evidence ack takes; an ack of that key
// with evidence that is not the entry's now is refused; with both right it is recorded.
func TestAttentionAckNeedsAnEntry(t *testing.T) {
	ws := cliWorkspace(t) // lease L1 of s1, past its expiry: an orphan an operator reconciles
	audit := ws[len(ws)-1]
	marks := govern.AttentionPath(audit)
	for _, args := range [][]string{
		{"attention", "ack", "--entry", "bogus", "--evidence", "x"},
		{"attention", "snooze", "--entry", "orphan:active-lease-past-expiry:L9", "--evidence", "x", "--for", "1h"},
	} {
		code, out, errs := runSplit(t, append(append(args, "--as-role", "operator"), ws...)...)
		if code != ExitRefused || !strings.Contains(out, "not_found") || !strings.Contains(out, "steward attention list") {
			t.Errorf("%v: exit %d\n%s%s", args, code, out, errs)
		}
		if b, _ := os.ReadFile(marks); len(b) > 0 {
			t.Fatalf("%v left a mark:\n%s", args, b)
		}
	}
	code, out, errs := runSplit(t, append([]string{"attention", "list", "--json"}, ws...)...)
	var l attentionList
	if code != ExitOK || json.Unmarshal([]byte(out), &l) != nil {
		t.Fatalf("attention list: exit %d\n%s%s", code, out, errs)
	}
	var key, ev, level string
	for _, e := range l.Entries {
		if strings.HasPrefix(e.Key, "orphan:active-lease-past-expiry:L1") {
			key, ev, level = e.Key, e.Evidence, strconv.Itoa(e.Level)
		}
	}
	if key == "" || ev == "" {
		t.Fatalf("attention list does not show the orphan of L1 with its key and evidence: %+v", l.Entries)
	}
	if code, text, _ := runSplit(t, append([]string{"attention", "list"}, ws...)...); code != ExitOK || !strings.Contains(text, key) || !strings.Contains(text, ev) {
		t.Errorf("the text list does not show %s %s:\n%s", key, ev, text)
	}
	if code, out, _ := runSplit(t, append([]string{"attention", "ack", "--entry", key, "--evidence", "0000", "--as-role", "operator"}, ws...)...); code != ExitRefused || !strings.Contains(out, govern.CodeFenceMoved) {
		t.Errorf("ack with evidence that moved: exit %d\n%s", code, out)
	}
	if code, out, errs := runSplit(t, append([]string{"attention", "ack", "--entry", key, "--evidence", ev, "--level", level, "--as-role", "operator"}, ws...)...); code != ExitOK {
		t.Fatalf("ack of the listed entry: exit %d\n%s%s", code, out, errs)
	}
	if b, _ := os.ReadFile(marks); !bytes.Contains(b, []byte(key)) {
		t.Fatalf("no mark for %s:\n%s", key, b)
	}
	if _, out, _ := runSplit(t, append([]string{"attention", "list", "--json"}, ws...)...); !strings.Contains(out, `"acknowledged": true`) {
		t.Errorf("the list does not say the entry is acknowledged:\n%s", out)
	}
}

// TestUnsupportedDBScheme: --db with a URL steward cannot read says the scheme is not
// supported (it was read as a file name and reported missing).
func TestUnsupportedDBScheme(t *testing.T) {
	code, out, errs := runSplit(t, "status", "--no-gitea", "--db", "mysql://u@db/fleet", "--locks", t.TempDir())
	if code != ExitError || !strings.Contains(errs, "mysql is not supported") || strings.Contains(out+errs, "does not exist") {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
}

// TestHistoryExitsFiveWhenNothingRead: `history` (a timeline, since you left, the heatmap)
// and `status --at` exit 5 when none of the supervised system's sources could be read, as
// status does, with the reason on stderr — they exited 0 with a page of gaps. Since-you-left
// then keeps no new mark. With the sources read they exit 0.
func TestHistoryExitsFiveWhenNothingRead(t *testing.T) {
	dir := t.TempDir()
	none := []string{"--locks", filepath.Join(dir, "nolocks"), "--db", filepath.Join(dir, "no.sqlite3"), "--audit", filepath.Join(dir, "a.jsonl")}
	state := filepath.Join(t.TempDir(), "state")
	for _, args := range [][]string{{"history", "--item", "acme/widgets#7"}, {"history", "--since-left", "--state-dir", state}, {"history", "--heat"}, {"status", "--at", "2h"}} {
		code, out, errs := runSplit(t, append(args, none...)...)
		if code != ExitSourceUnavailable || !strings.Contains(errs, "no source could be read") {
			t.Errorf("%v with nothing readable: exit %d\n%s%s", args, code, out, errs)
		}
	}
	if ms, _ := filepath.Glob(filepath.Join(state, "seen", "*")); len(ms) != 0 {
		t.Errorf("since-you-left kept a mark though nothing was read: %v", ms)
	}
	ws := cliWorkspace(t)
	for _, args := range [][]string{{"history", "--item", "acme/widgets#5"}, {"status", "--at", "1m"}} {
		if code, out, errs := runSplit(t, append(args, ws...)...); code != ExitOK {
			t.Errorf("%v on a workspace: exit %d\n%s%s", args, code, out, errs)
		}
	}
}

// TestUIWithoutAWorkspaceOpensAndSays: `steward ui` where there is no workspace (no lock
// directory, no DB, no config file) opens the workbench — it exited with "locks: watch …: no
// such file or directory" — and says what to do: steward config init, --config, the flags,
// steward demo. It keeps reading, so it fills in once the workspace is there.
func TestUIWithoutAWorkspaceOpensAndSays(t *testing.T) {
	dir := t.TempDir()
	g := &globals{locksDir: filepath.Join(dir, "nolocks"), dbPath: filepath.Join(dir, "no.sqlite3"), repoRoot: dir,
		audit: filepath.Join(dir, "audit.jsonl"), role: "viewer"}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sess, err := openUI(ctx, g, true)
	if err != nil {
		t.Fatalf("steward ui without a workspace: %v", err)
	}
	defer sess.Close()
	if sess.Workbench.Notice == nil {
		t.Fatal("no notice says what to do")
	}
	tm := teatest.NewTestModel(t, tui.New(sess.Workbench), teatest.WithInitialTermSize(100, 30),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.Ascii), tea.WithFilter(demoScreenFilter)))
	go func() {
		for s := range sess.Workbench.Source.Snapshots() {
			tm.Send(tui.SnapshotMsg{Snapshot: s})
		}
	}()
	screen := waitScreen(t, tm, "the notice over the workbench", func(s string) bool {
		return strings.Contains(s, "Nothing to watch here") && strings.Contains(s, "locks unavailable")
	})
	for _, want := range []string{"steward config init", "steward --config FILE ui", "steward demo", "esc closes this"} {
		if !strings.Contains(screen, want) {
			t.Errorf("the notice does not say %q:\n%s", want, screen)
		}
	}
	// The workspace appears: the next read fills the views in.
	if err := os.MkdirAll(g.locksDir, 0o755); err != nil {
		t.Fatal(err)
	}
	sess.Workbench.Source.Refresh()
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEscape})
	waitScreen(t, tm, "the lock directory read", func(s string) bool { return strings.Contains(s, "locks ok") })
	_ = tm.Quit()
}

// TestDemoRefusesWorkspaceFlags: `steward demo` refuses the global flags that name another
// workspace or identity (it ignored them: --db /x ran the demo in a temp folder all the
// same), and a headless --json run without --keep prints no command for a folder it removed.
func TestDemoRefusesWorkspaceFlags(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	for _, flag := range [][]string{{"--db", "/x.sqlite3"}, {"--locks", "/x"}, {"--audit", "/x.jsonl"}, {"--login", "me"}, {"--repo-root", "/x"}} {
		code, out, errs := runSplit(t, append([]string{"demo", "--headless", "--for", "1s"}, flag...)...)
		if code != ExitError || !strings.Contains(errs, "takes no "+flag[0]) || strings.Contains(out, "seed ") {
			t.Errorf("demo %v: exit %d\n%s%s", flag, code, out, errs)
		}
	}
	code, out, errs := runSplit(t, "demo", "--headless", "--for", "1s", "--json")
	var rep demoReport
	if code != ExitOK || json.Unmarshal([]byte(out), &rep) != nil {
		t.Fatalf("demo --json: exit %d\n%s%s", code, out, errs)
	}
	if rep.Kept || len(rep.StatusCommand) != 0 || rep.Config != "" || rep.Try != nil {
		t.Errorf("a removed demo folder still comes with a command: %+v %q", rep.StatusCommand, rep.Config)
	}
	if _, err := os.Stat(rep.Root); err == nil {
		t.Errorf("the folder %s was not removed", rep.Root)
	}
}

// repeated matches a message whose first words come again right after it ("steward mcp:
// steward mcp serves …").
var repeated = regexp.MustCompile(`^([^:]{3,40}): (.*)$`)

// TestErrorsSayTheirPrefixOnce: an error message names its command once.
func TestErrorsSayTheirPrefixOnce(t *testing.T) {
	for _, args := range [][]string{
		{"mcp", "--http", "0.0.0.0:1"},
		{"mcp", "--token-file", "/x"},
		{"--config", "/nope.yaml", "audit"},
		{"init", "--db", filepath.Join(t.TempDir(), "x.sqlite3")},
		{"watch", "--locks", "/nope", "--db", "/nope.db", "--for", "1s"},
	} {
		code, _, errs := runSplit(t, args...)
		first := strings.SplitN(strings.TrimSpace(errs), "\n", 2)[0]
		if code == ExitOK || first == "" {
			t.Errorf("%v: exit %d, no error message", args, code)
			continue
		}
		if m := repeated.FindStringSubmatch(first); m != nil && (strings.HasPrefix(m[2], m[1]+" ") || strings.HasPrefix(m[2], m[1]+":")) {
			t.Errorf("%v repeats its prefix: %q", args, first)
		}
	}
	if got := onePrefix("steward mcp: steward mcp serves HTTP"); got != "steward mcp serves HTTP" {
		t.Errorf("onePrefix: %q", got)
	}
	if got := onePrefix("steward: stewardship: x"); got != "steward: stewardship: x" {
		t.Errorf("onePrefix cut a different word: %q", got)
	}
}
