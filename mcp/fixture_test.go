package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"steward/gitea"
	"steward/gitea/contract"
	"steward/gitea/gitearec"
	"steward/gitea/giteatest"
	"steward/govern"
)

func TestMain(m *testing.M) { os.Exit(giteatest.Main(m)) }

// fx is a real workspace (lock files, a migrated SQLite DB, an audit log) with a server
// on it, and in-memory client connections.
type fx struct {
	t     *testing.T
	dir   string
	ws    govern.Workspace
	audit *govern.AuditLog
	core  *govern.Core
	srv   *Server
	real  *contract.Backend
}

type fxOpt struct {
	role      govern.Role
	readOnly  bool
	gitea     bool
	clientPID int64
	remote    string
	// step is the core's hook at each boundary of an apply.
	step func(string)
}

func newFx(t *testing.T, o fxOpt) *fx {
	t.Helper()
	if o.role == govern.RoleNone {
		o.role = govern.RoleOperator
	}
	dir := t.TempDir()
	host, _ := os.Hostname()
	f := &fx{t: t, dir: dir, ws: govern.Workspace{LocksDir: filepath.Join(dir, "locks"), DBPath: filepath.Join(dir, "db", "cp.sqlite3"),
		RepoRoot: filepath.Join(dir, "repo"), Env: func(string) (string, bool) { return "", false }, Host: host}}
	if err := govern.InitWorkspace(f.ws); err != nil {
		t.Fatal(err)
	}
	if o.gitea {
		b := contract.NewRealBackend(t, giteatest.Shared(t))
		f.real = &b
		for _, l := range []string{gitearec.DefaultMarkerLabels[0], gitearec.DefaultBlockedLabel, "priority:high", "priority:low"} {
			b.Seed.Label(t, l)
		}
		cl, err := gitea.New(gitea.Config{Login: gitea.Login{URL: b.URL, Token: gitea.NewToken(b.MaintainerToken)}, Owner: b.Owner, Repo: b.Repo, RequestTimeout: 20 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		f.ws.Gitea = cl
	}
	log, err := govern.OpenAudit(filepath.Join(dir, "audit", "audit.jsonl"), nil)
	if err != nil {
		t.Fatal(err)
	}
	f.audit = log
	f.core = govern.New(f.ws, log, govern.Options{Actor: govern.LocalActor(o.role, "mcp-test"), ReadOnly: o.readOnly, Step: o.step})
	f.srv = New(Config{Core: f.core, ClientPID: o.clientPID, Remote: o.remote, Version: "test"})
	t.Cleanup(func() {
		f.srv.Close()
		f.core.Close()
		log.Close()
	})
	return f
}

// client connects a new in-memory client acting as session.
func (f *fx) client(session string) *Client {
	f.t.Helper()
	st, ct := sdk.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := f.srv.SDK().Connect(ctx, st, nil)
	if err != nil {
		f.t.Fatal(err)
	}
	c, err := Connect(ctx, ct, session)
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { c.Close(); ss.Close() })
	return c
}

// item is issue n of the fixture's repository (acme/widgets without Gitea).
func (f *fx) item(n int64) *ItemRef {
	if f.real != nil {
		return &ItemRef{Org: f.real.Owner, Repo: f.real.Repo, Number: n}
	}
	return &ItemRef{Org: "acme", Repo: "widgets", Number: n}
}

// state hashes every byte of the lock directory, the DB and its WAL, and the audit log,
// so a test proves a refusal wrote nothing (or only its audit record).
func (f *fx) state(withAudit bool) string {
	f.t.Helper()
	var b strings.Builder
	add := func(root string) {
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || strings.HasSuffix(p, "-shm") {
				return nil
			}
			data, _ := os.ReadFile(p)
			h := sha256.Sum256(data)
			fmt.Fprintf(&b, "%s %s\n", p, hex.EncodeToString(h[:]))
			return nil
		})
	}
	add(f.ws.LocksDir)
	add(filepath.Dir(f.ws.DBPath))
	if withAudit {
		add(filepath.Dir(f.audit.Path()))
	}
	return b.String()
}

func (f *fx) attempts() []govern.Attempt {
	f.t.Helper()
	recs, finds, err := govern.ReadAudit(f.audit.Path())
	if err != nil || len(finds) > 0 {
		f.t.Fatalf("audit: %v %v", err, finds)
	}
	return govern.Attempts(recs)
}

// oneTerminal checks every attempt in the audit log has exactly one outcome record.
func (f *fx) oneTerminal() []govern.Attempt {
	f.t.Helper()
	atts := f.attempts()
	for _, a := range atts {
		if a.Outcome == nil || a.Outcomes != 1 {
			f.t.Fatalf("attempt %s has %d outcome records", a.ID, a.Outcomes)
		}
	}
	return atts
}

func must[T any](t *testing.T) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}
