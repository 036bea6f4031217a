package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"steward/govern"
	"steward/govern/actionid"
)

// sample is the committed sample workspace at a fixed instant, Gitea not read.
var sample = []string{"--no-gitea", "--now", "2026-07-23T10:05:00Z", "--locks", "../testdata/workspace/locks",
	"--db", "../testdata/workspace/control_plane.sqlite3", "--repo-root", "../testdata/workspace/repo"}

// TestStatusExitCodes: a script can trust status's exit code, with or without --json — 0
// when every configured source was read, 5 when one is unavailable (it exited 0 with nothing
// read: `--db /nope --locks /nope` read as all clear), 6 when --fail-on finds what it names;
// the reason is on stderr and stdout stays the snapshot.
func TestStatusExitCodes(t *testing.T) {
	dir := t.TempDir()
	noAudit := []string{"--audit", filepath.Join(dir, "none.jsonl")}
	// An audit log holding an intent with no outcome: an attempt of unknown outcome.
	unknownLog := filepath.Join(dir, "unknown.jsonl")
	intent, _ := json.Marshal(govern.Record{V: 1, Attempt: "att-1", Kind: govern.KindIntent, Action: actionid.ReclaimExpired, At: "2026-07-23T10:00:00Z"})
	if err := os.WriteFile(unknownLog, append(intent, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := func(args []string, flag, path string) []string {
		out := append([]string(nil), args...)
		for i := range out {
			if out[i] == flag {
				out[i+1] = path
			}
		}
		return out
	}
	for _, tc := range []struct {
		name   string
		args   []string
		env    map[string]string
		code   int
		stderr string
	}{
		{name: "every source read", args: append(sample, noAudit...), code: ExitOK},
		{name: "nothing readable", args: []string{"--no-gitea", "--db", "/nope/db.sqlite3", "--locks", "/nope/locks", "--audit", filepath.Join(dir, "a.jsonl")},
			code: ExitSourceUnavailable, stderr: "unavailable: locks"},
		{name: "DB missing", args: append(missing(sample, "--db", filepath.Join(dir, "missing.sqlite3")), noAudit...), code: ExitSourceUnavailable, stderr: "unavailable: db"},
		{name: "locks missing", args: append(missing(sample, "--locks", filepath.Join(dir, "nolocks")), noAudit...), code: ExitSourceUnavailable, stderr: "unavailable: locks"},
		{name: "Gitea configured and unreachable", args: append(append(sample[1:], "--gitea-repo", "acme/widgets"), noAudit...),
			env: map[string]string{"STEWARD_GITEA_URL": "http://127.0.0.1:1", "STEWARD_GITEA_TOKEN": "tok-status-exit-1234"}, code: ExitSourceUnavailable, stderr: "unavailable: gitea"},
		{name: "fail on human-required, none", args: append(append(sample, "--fail-on", "human-required"), noAudit...), code: ExitOK},
		{name: "fail on attention, orphans to reconcile", args: append(append(sample, "--fail-on", "attention"), noAudit...), code: exitAttention, stderr: " operator (--fail-on attention, exit 6)"},
		{name: "fail on human-required, an unknown outcome", args: append(sample, "--fail-on", "human-required", "--audit", unknownLog), code: exitAttention, stderr: "1 human-required"},
		{name: "an unavailable source wins over fail-on", args: append(missing(sample, "--db", filepath.Join(dir, "missing.sqlite3")), "--fail-on", "attention", "--audit", unknownLog),
			code: ExitSourceUnavailable, stderr: "unavailable: db"},
		{name: "fail-on takes only its values", args: append(sample, "--fail-on", "everything"), code: ExitError, stderr: `--fail-on "everything": want human-required`},
	} {
		for _, asJSON := range []bool{false, true} {
			name := tc.name
			if asJSON {
				name += " --json"
			}
			t.Run(name, func(t *testing.T) {
				for k, v := range tc.env {
					t.Setenv(k, v)
				}
				args := append([]string{"status"}, tc.args...)
				if asJSON {
					args = append(args, "--json")
				}
				var out, errb bytes.Buffer
				code := Main(args, &out, &errb)
				if code != tc.code || !strings.Contains(errb.String(), tc.stderr) {
					t.Fatalf("exit %d, want %d; stderr %q, want it to hold %q\nstdout:\n%s", code, tc.code, errb.String(), tc.stderr, out.String())
				}
				if code == ExitError {
					return
				}
				if asJSON && !json.Valid(out.Bytes()) {
					t.Fatalf("stdout is not the JSON snapshot:\n%s", out.String())
				}
				if !asJSON && !strings.HasPrefix(out.String(), "steward status at ") {
					t.Fatalf("stdout is not the snapshot:\n%s", out.String())
				}
			})
		}
	}
	// The unknown outcome is in the output too, not only in the exit code.
	if _, out := run(t, append(append([]string{"status"}, sample...), "--audit", unknownLog)...); !strings.Contains(out, "unknown outcome of lease.reclaim-expired (attempt att-1)") {
		t.Fatalf("status does not list the unknown outcome:\n%s", out)
	}
}

// TestStatusWatchExitCode: with --watch the exit code is the last printed snapshot's.
func TestStatusWatchExitCode(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := &cancelOnWrite{cancel: cancel}
	root := newRoot(w, &bytes.Buffer{})
	root.SetArgs([]string{"status", "--watch", "--json", "--no-gitea", "--locks", "../testdata/workspace/locks",
		"--db", filepath.Join(dir, "missing.sqlite3"), "--repo-root", "../testdata/workspace/repo", "--audit", filepath.Join(dir, "a.jsonl")})
	err := root.ExecuteContext(ctx)
	var ee *exitError
	if !errorsAs(err, &ee) || ee.code != ExitSourceUnavailable {
		t.Fatalf("status --watch with the DB missing ended with %v, want exit %d", err, ExitSourceUnavailable)
	}
	if w.n == 0 {
		t.Fatal("no snapshot printed")
	}
}

// cancelOnWrite cancels the command once the first snapshot is written.
type cancelOnWrite struct {
	mu     sync.Mutex
	n      int
	cancel func()
}

func (c *cancelOnWrite) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	c.cancel()
	return len(p), nil
}

func errorsAs(err error, target **exitError) bool {
	e, ok := err.(*exitError)
	if ok {
		*target = e
	}
	return ok
}
