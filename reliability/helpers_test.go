package reliability_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"steward/cli"
	"steward/govern"
	"steward/model"
)

// statusNow is the instant every catalogue status is classified at: the hostile locks'
// expiries (2026-07-24T06:10:00Z) lie ten minutes ahead of it.
const statusNow = "2026-07-24T06:00:00Z"

// workspace is a real steward workspace in a temp dir: locks directory, migrated DB,
// repository root with branches/, and an audit log path.
type workspace struct {
	dir   string
	ws    govern.Workspace
	audit string
}

func newWorkspace(t testing.TB) *workspace {
	t.Helper()
	dir := t.TempDir()
	w := &workspace{dir: dir, audit: filepath.Join(dir, "audit", "audit.jsonl"), ws: govern.Workspace{
		LocksDir: filepath.Join(dir, "locks"), DBPath: filepath.Join(dir, "db", "control_plane.sqlite3"),
		RepoRoot: filepath.Join(dir, "repo")}}
	if err := govern.InitWorkspace(w.ws); err != nil {
		t.Fatal(err)
	}
	// An empty config file: the commands run on their flags alone (a file --config names
	// must exist).
	if err := os.WriteFile(filepath.Join(dir, "no-config.yaml"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	return w
}

// flags are the workspace flags of every steward command.
func (w *workspace) flags() []string {
	return []string{"--locks", w.ws.LocksDir, "--db", w.ws.DBPath, "--repo-root", w.ws.RepoRoot, "--audit", w.audit,
		"--config", filepath.Join(w.dir, "no-config.yaml")}
}

// steward runs the command line in-process and returns its exit code, stdout and stderr.
func steward(t testing.TB, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := cli.Main(args, &out, &errb)
	return code, out.String(), errb.String()
}

// status runs `steward status --json` on w at statusNow and decodes the snapshot; it also
// runs the text form and checks it holds no terminal control sequence.
func (w *workspace) status(t testing.TB) (*model.Snapshot, string) {
	t.Helper()
	args := append([]string{"status", "--json", "--no-gitea", "--now", statusNow}, w.flags()...)
	code, out, errs := steward(t, args...)
	var s model.Snapshot
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("status --json (exit %d) is not a snapshot: %v\n%s%s", code, err, out, errs)
	}
	// The exit code tells the truth about the sources: ExitSourceUnavailable
	// exactly when one could not be read, ExitOK otherwise.
	want := cli.ExitOK
	for _, h := range []model.SourceHealth{s.Sources.Locks, s.Sources.DB, s.Sources.Gitea} {
		if h.Status == model.StatusUnavailable {
			want = cli.ExitSourceUnavailable
		}
	}
	if code != want {
		t.Fatalf("steward status --json: exit %d, want %d\n%s%s", code, want, out, errs)
	}
	code, text, errs := steward(t, append([]string{"status", "--no-gitea", "--now", statusNow}, w.flags()...)...)
	if code != want {
		t.Fatalf("steward status: exit %d, want %d\n%s%s", code, want, text, errs)
	}
	if bad := controlIn(text); bad != "" {
		t.Fatalf("steward status printed a control sequence (%s):\n%q", bad, text)
	}
	return &s, out
}

// controlIn names the first character of s that could drive a terminal (an escape, a C0
// or C1 control other than newline, DEL, or a bidi override), or "" when there is none.
func controlIn(s string) string {
	for _, r := range s {
		switch {
		case r == '\n':
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f):
			return "control " + strings.TrimPrefix(jsonQuote(string(r)), "")
		case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f, r == 0x061c:
			return "bidi " + jsonQuote(string(r))
		}
	}
	return ""
}

func jsonQuote(s string) string { b, _ := json.Marshal(s); return string(b) }

// writeFile writes data at path (0600), failing the test on error.
func writeFile(t testing.TB, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// waitFor polls cond every few milliseconds until it holds or the deadline passes. The
// poll interval bounds how soon a change is seen; it never stands in for an event.
func waitFor(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }
