package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"steward/gitea"
	"steward/gitea/fakegitea"
	"steward/govern"
	"steward/govern/actionid"
)

// TestAuditWrittenWithMapParamsOnEverySurface: an audit log written before the parameters
// were typed (govern/testdata/audit_map_params.jsonl, map parameters: an answer whose
// inverse is a relabel {"label": the marker}, and a relabel interrupted after its intent)
// still lists with `steward audit` (text and --json, the inverse's parameters as written),
// settles with `steward audit verify`, and undoes with `steward undo`, which re-adds the
// marker the old answer removed.
func TestAuditWrittenWithMapParamsOnEverySurface(t *testing.T) {
	const marker = "status:blocked-pending-clarification"
	old, err := os.ReadFile(filepath.Join("..", "govern", "testdata", "audit_map_params.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	oldInverse := `"params":{"label":"` + marker + `"}`
	if !bytes.Contains(old, []byte(oldInverse)) {
		t.Fatal("the fixture holds no map parameters")
	}
	dir := t.TempDir()
	ws := govern.Workspace{LocksDir: filepath.Join(dir, "locks"), DBPath: filepath.Join(dir, "db", "cp.sqlite3"), RepoRoot: filepath.Join(dir, "repo")}
	if err := govern.InitWorkspace(ws); err != nil {
		t.Fatal(err)
	}
	// The Gitea item the old records were written about: question, marker, then the answer.
	fake := fakegitea.New()
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	fake.SetBaseURL(srv.URL)
	const token = "fake-old-audit-token-0123456789"
	fake.AddUser("maint", token)
	repo := fake.CreateRepo("acme", "widgets")
	repo.CreateLabel(marker, "d93f0b")
	n := repo.CreateIssue("maint", "Which API?", "body")
	repo.AddComment("worker", n, "Should this use the v2 API?")
	repo.AddLabel("worker", n, marker)
	audit := filepath.Join(dir, "audit.jsonl")
	cfg := filepath.Join(dir, "steward.yaml")
	text := fmt.Sprintf(`default_workspace: w
workspaces:
  w:
    locks_dir: %s
    db_path: %s
    repo_root: %s
    audit_log: %s
    gitea:
      url: %s
      token: %s
      owner: acme
      repo: widgets
`, ws.LocksDir, ws.DBPath, ws.RepoRoot, audit, srv.URL, token)
	if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	steward := func(args ...string) (int, string) {
		t.Helper()
		return run(t, append([]string{"--config", cfg}, args...)...)
	}
	if code, out := steward("answer", "--org", "acme", "--repo", "widgets", "--number", "1", "--body", "Use **v2**.", "--as-role", "operator"); code != ExitOK {
		t.Fatalf("answer: %d\n%s", code, out)
	}
	if err := os.WriteFile(audit, old, 0o600); err != nil {
		t.Fatal(err)
	}

	code, out := steward("audit", "--json")
	var view struct {
		Attempts []govern.Attempt
		Findings []govern.AuditFinding
	}
	if code != ExitOK || json.Unmarshal([]byte(out), &view) != nil || len(view.Attempts) != 2 || len(view.Findings) != 0 {
		t.Fatalf("audit --json: %d\n%s", code, out)
	}
	var answer, relabel govern.Attempt
	for _, a := range view.Attempts {
		switch a.Intent.Action {
		case actionid.Answer:
			answer = a
		case actionid.Relabel:
			relabel = a
		}
	}
	if answer.Status() != govern.ResultSucceeded || answer.Outcome.Inverse == nil || !relabel.Unresolved() || !strings.Contains(compact(t, out), oldInverse) {
		t.Fatalf("audit --json attempts: %s", out)
	}
	if p, ok := answer.Outcome.Inverse.Params.(govern.RelabelParams); !ok || p.Label != marker {
		t.Fatalf("the old inverse read back as %#v", answer.Outcome.Inverse.Params)
	}
	if code, out := steward("audit"); code != ExitOK || !strings.Contains(out, answer.ID) || !strings.Contains(out, relabel.ID) || strings.Contains(out, "finding") {
		t.Fatalf("audit: %d\n%s", code, out)
	}

	if code, out := steward("audit", "verify", "--as-role", "operator"); code != ExitOK || !strings.Contains(out, relabel.ID+"  failed") {
		t.Fatalf("audit verify: %d\n%s", code, out)
	}

	if code, out := steward("undo", "--attempt", answer.ID, "--as-role", "operator"); code != ExitOK || !strings.Contains(out, "label "+marker+" added") {
		t.Fatalf("undo: %d\n%s", code, out)
	}
	cl, err := gitea.New(gitea.Config{Login: gitea.Login{URL: srv.URL, Token: gitea.NewToken(token)}, Owner: "acme", Repo: "widgets", RequestTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if is, err := cl.GetIssue(context.Background(), n); err != nil || !is.HasLabel(marker) {
		t.Fatalf("the marker was not re-added: %+v %v", is, err)
	}
	if b, _ := os.ReadFile(audit); !bytes.HasPrefix(b, old) {
		t.Fatal("the old records changed")
	}
}

func compact(t *testing.T, s string) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
