package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"steward/govern"
	"steward/govern/actionid"
)

// deadPID is the id of a process that has exited.
func deadPID(t *testing.T) string {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return strconv.Itoa(cmd.Process.Pid)
}

// `steward recover --item ORG/REPO#N` recovers what a dead worker left
// — its lease and its lock — in one plan: --dry-run lists every step and changes nothing,
// the apply ends the lease and retires the lock under one attempt, and `steward audit`
// shows that attempt with its target and its steps, filtered by item and action.
func TestRecoverFromTheCommandLine(t *testing.T) {
	ws := cliWorkspace(t)
	audit := ws[len(ws)-1]
	locksDir := ws[1]
	code, out := run(t, append([]string{"claim", "--org", "acme", "--repo", "widgets", "--number", "7", "--session", "s-dead",
		"--pid", deadPID(t), "--username", "bot-dead", "--as-role", "operator"}, ws...)...)
	if code != ExitOK {
		t.Fatalf("claim: %d\n%s", code, out)
	}
	lockFiles := func() []string {
		names, _ := filepath.Glob(filepath.Join(locksDir, "*.json"))
		return names
	}
	if len(lockFiles()) != 1 {
		t.Fatalf("the claim left %v", lockFiles())
	}
	if code, out = run(t, append([]string{"recover", "--item", "acme/widgets#7x"}, ws...)...); code != ExitError || !strings.Contains(out, "ORG/REPO#N") {
		t.Fatalf("a bad item: %d\n%s", code, out)
	}
	dbBefore, _ := os.ReadFile(ws[3])
	auditBefore, _ := os.ReadFile(audit)
	code, out = run(t, append([]string{"recover", "--item", "acme/widgets#7", "--dry-run", "--as-role", "operator"}, ws...)...)
	if code != ExitOK || !strings.Contains(out, "step 1 of 2") || !strings.Contains(out, "step 2 of 2") ||
		!strings.Contains(out, actionid.RetireLock) || !strings.Contains(out, "nothing was changed") {
		t.Fatalf("dry run: %d\n%s", code, out)
	}
	dbAfter, _ := os.ReadFile(ws[3])
	auditAfter, _ := os.ReadFile(audit)
	if !bytes.Equal(dbBefore, dbAfter) || !bytes.Equal(auditBefore, auditAfter) || len(lockFiles()) != 1 {
		t.Fatal("the dry run changed the DB, the audit log or the lock directory")
	}
	_, phrase, ok := strings.Cut(out, "confirm with: --confirm ")
	if !ok {
		t.Fatalf("the dry run names no confirmation phrase:\n%s", out)
	}
	phrase, _ = strconv.Unquote(strings.TrimSpace(strings.SplitN(phrase, "\n", 2)[0]))
	code, out = run(t, append([]string{"recover", "--item", "acme/widgets#7", "--as-role", "operator", "--confirm", phrase, "--json"}, ws...)...)
	var o govern.Outcome
	if code != ExitOK || json.Unmarshal([]byte(out), &o) != nil || o.Result != govern.ResultSucceeded {
		t.Fatalf("apply: %d\n%s", code, out)
	}
	if len(lockFiles()) != 0 {
		t.Fatalf("the lock is still live: %v", lockFiles())
	}
	code, out = run(t, append([]string{"audit", "--item", "acme/widgets#7", "--action", actionid.Recover, "--json"}, ws...)...)
	var view struct {
		Attempts     []govern.Attempt
		Shown, Total int
	}
	if code != ExitOK || json.Unmarshal([]byte(out), &view) != nil || len(view.Attempts) != 1 {
		t.Fatalf("audit --item --action: %d\n%s", code, out)
	}
	if a := view.Attempts[0]; a.Status() != govern.ResultSucceeded || len(a.Steps) != 2 || view.Total != 2 || view.Shown != 1 {
		t.Fatalf("the recover attempt: %+v (shown %d of %d)", a, view.Shown, view.Total)
	}
}
