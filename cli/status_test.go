package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestStatusJSONOnSampleWorkspace runs `steward status --json` on the
// committed sample workspace at a fixed instant.
func TestStatusJSONOnSampleWorkspace(t *testing.T) {
	var out, errb bytes.Buffer
	code := Main([]string{"status", "--json", "--no-gitea", "--now", "2026-07-23T10:05:00Z",
		"--locks", "../testdata/workspace/locks", "--db", "../testdata/workspace/control_plane.sqlite3",
		"--repo-root", "../testdata/workspace/repo"}, &out, &errb)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var s struct {
		GeneratedAt string                     `json:"generated_at"`
		Sources     map[string]map[string]any  `json:"sources"`
		Orphans     []map[string]any           `json:"orphans"`
		Contention  []map[string]any           `json:"contention"`
		Claims      []map[string]any           `json:"claims"`
		Other       map[string]json.RawMessage `json:"-"`
	}
	if err := json.Unmarshal(out.Bytes(), &s); err != nil {
		t.Fatal(err)
	}
	if s.GeneratedAt != "2026-07-23T10:05:00Z" || s.Sources["db"]["status"] != "ok" || s.Sources["gitea"]["status"] != "not_configured" {
		t.Fatalf("header: %s %v", s.GeneratedAt, s.Sources)
	}
	kinds := map[string]map[string]any{}
	for _, o := range s.Orphans {
		kinds[o["kind"].(string)] = o
	}
	for _, k := range []string{"unreadable-lock", "legacy-lock", "active-lease-past-expiry"} {
		if kinds[k] == nil {
			t.Errorf("orphan %s missing; have %v", k, kinds)
		}
	}
	if a, ok := kinds["active-lease-past-expiry"]["action"].(map[string]any); !ok || a["id"] != "lease.reclaim-expired" || a["allowed"] != true {
		t.Errorf("past-expiry action = %v", kinds["active-lease-past-expiry"]["action"])
	}
	if len(s.Contention) != 1 || s.Contention[0]["kind"] != "claim-refused" || s.Contention[0]["count"].(float64) != 2 {
		t.Errorf("contention = %v", s.Contention)
	}
	if len(s.Claims) != 5 {
		t.Errorf("claims = %d, want 5", len(s.Claims))
	}
	out.Reset()
	if code := Main([]string{"status", "--no-gitea", "--now", "2026-07-23T10:05:00Z", "--locks", "../testdata/workspace/locks",
		"--db", "../testdata/workspace/missing.sqlite3"}, &out, &errb); code != ExitSourceUnavailable {
		t.Fatalf("exit %d with the DB missing, want %d", code, ExitSourceUnavailable)
	}
	if !strings.Contains(out.String(), "db     unavailable") || strings.Contains(out.String(), "orphan-lease") {
		t.Fatalf("missing DB must read unavailable and yield no lease orphans:\n%s", out.String())
	}
}
