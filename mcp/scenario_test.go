package mcp_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"steward/gitea"
	"steward/govern"
	"steward/mcp"
	"steward/mcp/mcptest"
)

// inMemory serves a fresh workspace with one server and connects every client to it in
// memory.
func inMemory(t *testing.T) mcptest.Env {
	e, _ := inMemoryWith(t, nil)
	return e
}

// inMemoryWith is inMemory with a Gitea repository (g may be nil).
func inMemoryWith(t *testing.T, g *gitea.Client) (mcptest.Env, govern.Workspace) {
	t.Helper()
	e, ws, _ := inMemoryServer(t, g)
	return e, ws
}

// inMemoryServer is inMemoryWith with the server itself.
func inMemoryServer(t *testing.T, g *gitea.Client) (mcptest.Env, govern.Workspace, *mcp.Server) {
	t.Helper()
	dir := t.TempDir()
	host, _ := os.Hostname()
	ws := govern.Workspace{LocksDir: filepath.Join(dir, "locks"), DBPath: filepath.Join(dir, "db", "cp.sqlite3"),
		RepoRoot: filepath.Join(dir, "repo"), Env: func(string) (string, bool) { return "", false }, Host: host}
	if g != nil {
		ws.Gitea = g
	}
	if err := govern.InitWorkspace(ws); err != nil {
		t.Fatal(err)
	}
	log, err := govern.OpenAudit(filepath.Join(dir, "audit", "audit.jsonl"), nil)
	if err != nil {
		t.Fatal(err)
	}
	core := govern.New(ws, log, govern.Options{Actor: govern.LocalActor(govern.RoleOperator, "mcp-test")})
	srv := mcp.New(mcp.Config{Core: core, Version: "test"})
	t.Cleanup(func() { srv.Close(); core.Close(); log.Close() })
	return mcptest.Env{LocksDir: ws.LocksDir, DBPath: ws.DBPath, AuditPath: log.Path(), Org: "acme", Repo: "widgets",
		Dial: func(t *testing.T, session string) *mcp.Client {
			t.Helper()
			st, ct := sdk.NewInMemoryTransports()
			ss, err := srv.SDK().Connect(context.Background(), st, nil)
			if err != nil {
				t.Fatal(err)
			}
			c, err := mcp.Connect(context.Background(), ct, session)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close(); ss.Close() })
			return c
		}}, ws, srv
}

func TestInMemoryFlow(t *testing.T)     { mcptest.Flow(t, inMemory(t), 7) }
func TestInMemorySeedFlow(t *testing.T) { mcptest.SeedFlow(t, inMemory(t), 5) }

// TestInMemoryClarify: ask, get_answer and claim next against a real Gitea.
func TestInMemoryClarify(t *testing.T) {
	b, cl := mcptest.RealRepo(t)
	e, ws := inMemoryWith(t, cl)
	mcptest.Clarify(t, mcptest.WithGitea(e, b, cl, ws))
}
func TestInMemoryRefusals(t *testing.T) { mcptest.Refusals(t, inMemory(t), 3) }

// TestInMemorySixteenClientsClaimOneItem: one lease, fifteen structured refusals, one
// terminal audit record per attempt.
func TestInMemorySixteenClientsClaimOneItem(t *testing.T) { mcptest.Race(t, inMemory(t), 16, 11) }
