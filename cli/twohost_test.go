package cli

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"steward/leases/pgtest"
	"steward/locks"
	"steward/mcp"
	"steward/mcp/mcptest"
)

// TestTwoHostsOnePostgres: two steward processes that name themselves host-a and host-b
// (STEWARD_HOSTNAME), each with its own lock directory and audit log, serve workers
// (steward mcp over HTTP) against one PostgreSQL control plane that `steward init`
// created. Six workers on each host claim, heartbeat and release four items at once, for
// several rounds. No item is ever owned twice (no two leases of an item were active at
// once, by the database's own timestamps), each host's locks name only its own claims,
// and every attempt in each host's audit log has exactly one terminal record.
func TestTwoHostsOnePostgres(t *testing.T) {
	const perHost, items, rounds = 6, 4, 5
	url, bin := initPG(t)
	var hosts []*twoHost
	for _, name := range []string{"host-a", "host-b"} {
		hosts = append(hosts, startHost(t, bin, url, name))
	}
	var mu sync.Mutex
	won := map[string]int{}
	refused := map[string]int{}
	var wg sync.WaitGroup
	var firsts []*mcp.Client // each host's first worker
	start := make(chan struct{})
	for _, h := range hosts {
		for w := range perHost {
			session := fmt.Sprintf("%s-w%d", h.name, w)
			c, err := mcp.Connect(context.Background(), mcp.HTTPTransport(h.url, ""), session)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close() })
			if w == 0 {
				firsts = append(firsts, c)
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				ctx := context.Background()
				for r := range rounds {
					it := h.env.Item(int64((w+r)%items + 1))
					o, err := c.Claim(ctx, mcp.ClaimArgs{Item: it})
					if err != nil {
						t.Errorf("%s claim: %v", session, err)
						return
					}
					mu.Lock()
					if o.Success {
						won[h.name]++
					} else {
						refused[o.Code]++
					}
					mu.Unlock()
					if !o.Success {
						if o.Result != "refused" {
							t.Errorf("%s claim: %+v", session, o)
						}
						continue
					}
					hb, err := c.Heartbeat(ctx, *o.Fence)
					if err != nil || !hb.Success {
						t.Errorf("%s heartbeat: %+v %v", session, hb, err)
						return
					}
					if rel, err := c.Release(ctx, *hb.Fence); err != nil || !rel.Success {
						t.Errorf("%s release: %+v %v", session, rel, err)
						return
					}
				}
			}()
		}
	}
	close(start)
	wg.Wait()
	if t.Failed() {
		return
	}
	// Every item is free again: each host's first worker claims, heartbeats and releases
	// once more, one host after the other. Under load the race above can leave one host
	// without a win; this round cannot (it failed once so on a loaded machine: host-a 15 wins, host-b none).
	for i, c := range firsts {
		ctx := context.Background()
		o, err := c.Claim(ctx, mcp.ClaimArgs{Item: hosts[i].env.Item(1)})
		if err != nil || !o.Success {
			t.Fatalf("%s: a claim of a free item: %+v %v", hosts[i].name, o, err)
		}
		won[hosts[i].name]++
		hb, err := c.Heartbeat(ctx, *o.Fence)
		if err != nil || !hb.Success {
			t.Fatalf("%s heartbeat: %+v %v", hosts[i].name, hb, err)
		}
		if rel, err := c.Release(ctx, *hb.Fence); err != nil || !rel.Success {
			t.Fatalf("%s release: %+v %v", hosts[i].name, rel, err)
		}
	}
	if won["host-a"] == 0 || won["host-b"] == 0 {
		t.Fatalf("claims won per host %v (refusals %v): both hosts' workers must have worked", won, refused)
	}
	lockHost := map[string]string{} // lease id -> the host whose lock directory holds its lock
	for _, h := range hosts {
		h.env.OneTerminal(t)
		snap, err := locks.LoadDir(h.env.LocksDir, locks.LoadOptions{Retired: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(snap.Live) != 0 {
			t.Errorf("%s: %d live locks after every release", h.name, len(snap.Live))
		}
		for _, e := range snap.Retired {
			lockHost[e.Record.LeaseID] = h.name
		}
	}
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT lease_id, work_item_id, owner_host, status, created_at, released_at FROM leases ORDER BY work_item_id, created_at`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	type span struct {
		from, to time.Time
	}
	last := map[int64]span{}
	total, byHost := 0, map[string]int{}
	for rows.Next() {
		var item int64
		var id, owner, status string
		var from time.Time
		var to sql.NullTime
		if err := rows.Scan(&id, &item, &owner, &status, &from, &to); err != nil {
			t.Fatal(err)
		}
		total++
		byHost[owner]++
		if lockHost[id] != owner {
			t.Errorf("lease %s of %s: its lock is in %q's lock directory", id, owner, lockHost[id])
		}
		if status != "released" || !to.Valid {
			t.Errorf("item %d: a lease left %s", item, status)
			continue
		}
		if p, ok := last[item]; ok && from.Before(p.to) {
			t.Errorf("item %d: a lease from %s while the previous one was held until %s: two owners at once", item, from, p.to)
		}
		last[item] = span{from, to.Time}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if total != won["host-a"]+won["host-b"] || byHost["host-a"] != won["host-a"] || byHost["host-b"] != won["host-b"] {
		t.Errorf("%d lease rows by host %v, claims won %v", total, byHost, won)
	}
	t.Logf("claims won %v, refused %v, %d leases over %d items", won, refused, total, items)
}

// twoHost is one "host" of the two-host tests: a steward mcp process naming itself name
// (STEWARD_HOSTNAME), with its own lock directory, repository root and audit log, on the
// shared PostgreSQL control plane.
type twoHost struct {
	name  string
	env   mcptest.Env
	url   string
	flags []string
}

// initPG creates a database on the test server and runs the real `steward init` on it
// twice (it is idempotent); it returns the database URL and the steward binary.
func initPG(t *testing.T) (string, string) {
	t.Helper()
	url := pgtest.NewDB(t)
	bin := realSteward(t)
	for range 2 {
		out, err := exec.Command(bin, "init", "--db", url, "--as-role", "admin").CombinedOutput()
		if err != nil || !strings.Contains(string(out), "holds steward's schema") {
			t.Fatalf("steward init: %v\n%s", err, out)
		}
	}
	return url, bin
}

func startHost(t *testing.T, bin, url, name string) *twoHost {
	t.Helper()
	dir := t.TempDir()
	locksDir, repo, audit := filepath.Join(dir, "locks"), filepath.Join(dir, "repo"), filepath.Join(dir, "audit.jsonl")
	for _, d := range []string{locksDir, filepath.Join(repo, "branches")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	flags := []string{"--locks", locksDir, "--db", url, "--repo-root", repo, "--audit", audit, "--as-role", "operator"}
	u, _ := serveHTTP(t, bin, cleanEnv(t, "STEWARD_HOSTNAME="+name), flags...)
	return &twoHost{name: name, url: u, flags: flags,
		env: mcptest.Env{LocksDir: locksDir, DBPath: url, AuditPath: audit, Org: "acme", Repo: "widgets"}}
}

// run runs the real steward as this host with args after the host's own flags.
func (h *twoHost) run(t *testing.T, bin string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(bin, append(args, h.flags...)...)
	cmd.Env = cleanEnv(t, "STEWARD_HOSTNAME="+h.name)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// claimsByLease is `steward status --json --no-gitea` as this host: the claims by lease id.
func (h *twoHost) claimsByLease(t *testing.T, bin string) map[string]map[string]any {
	t.Helper()
	out, err := h.run(t, bin, "status", "--json", "--no-gitea")
	if err != nil {
		t.Fatalf("%s: steward status: %v\n%s", h.name, err, out)
	}
	var s struct {
		Claims []map[string]any `json:"claims"`
	}
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("%s: status --json: %v\n%s", h.name, err, out)
	}
	by := map[string]map[string]any{}
	for _, c := range s.Claims {
		if id, ok := c["lease_id"].(string); ok {
			by[id] = c
		}
	}
	return by
}

// TestTwoHostsFenceAndLiveness: what one host cannot see, and the fence the database
// enforces between hosts. Worker processes on host-a and host-b hold leases on one
// PostgreSQL. host-b shows host-a's owner as "unknown, other host" — never dead, also
// after that process has died, which host-a itself sees as dead. When host-a's lease has
// expired by the database's clock (expires_at <= now() at the server; the node's clock is
// never asked), host-a's heartbeat with its fence is refused, host-b reclaims the lease
// and claims the item with a higher lease_generation_id, and host-a's stale release is
// refused: the item has one active lease, host-b's. Every attempt on both hosts has one
// terminal record.
func TestTwoHostsFenceAndLiveness(t *testing.T) {
	url, bin := initPG(t)
	a, b := startHost(t, bin, url, "host-a"), startHost(t, bin, url, "host-b")
	ctx := context.Background()
	worker := func() *exec.Cmd { // a worker process: its pid is what the lease records
		p := exec.Command("sleep", "3600")
		if err := p.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = p.Process.Kill(); _ = p.Wait() })
		return p
	}
	connect := func(h *twoHost, session string) *mcp.Client {
		c, err := mcp.Connect(ctx, mcp.HTTPTransport(h.url, ""), session)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	pa, pb := worker(), worker()
	wa, wb := connect(a, "a-w1"), connect(b, "b-w1")
	ca, err := wa.Claim(ctx, mcp.ClaimArgs{Item: a.env.Item(7), PID: int64(pa.Process.Pid)})
	if err != nil || !ca.Success {
		t.Fatalf("host-a claim: %+v %v", ca, err)
	}
	cb, err := wb.Claim(ctx, mcp.ClaimArgs{Item: b.env.Item(8), PID: int64(pb.Process.Pid)})
	if err != nil || !cb.Success {
		t.Fatalf("host-b claim: %+v %v", cb, err)
	}
	if o, err := wb.Claim(ctx, mcp.ClaimArgs{Item: b.env.Item(7), PID: int64(pb.Process.Pid)}); err != nil || o.Success {
		t.Fatalf("host-b claimed host-a's item: %+v %v", o, err)
	}

	check := func(h *twoHost, o mcp.Outcome, live, other string) {
		t.Helper()
		c := h.claimsByLease(t, bin)[o.Fence.LeaseID]
		if c == nil {
			t.Fatalf("%s: no claim of lease %s", h.name, o.Fence.LeaseID)
		}
		l, oh := fmt.Sprint(c["owner_liveness"]), fmt.Sprint(c["owner_other_host"])
		if oh == "<nil>" {
			oh = ""
		}
		if l != live || oh != other {
			t.Errorf("%s sees lease %s's owner %s (other host %q), want %s (other host %q)", h.name, o.Fence.LeaseID, l, oh, live, other)
		}
	}
	check(a, ca, "alive", "")
	check(b, ca, "unknown", "host-a")
	check(b, cb, "alive", "")
	check(a, cb, "unknown", "host-b")
	if out, _ := b.run(t, bin, "status", "--no-gitea"); !strings.Contains(out, "owner unknown, other host (host-a)") {
		t.Errorf("host-b's status does not say host-a's owner is unknown, other host:\n%s", out)
	}

	// host-a's worker process dies: host-a sees it dead, host-b still cannot know.
	_ = pa.Process.Kill()
	_ = pa.Wait()
	check(a, ca, "dead", "")
	check(b, ca, "unknown", "host-a")

	// host-a's lease runs out by the database's clock.
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`UPDATE leases SET expires_at = now() - interval '1 second' WHERE lease_id = $1`, ca.Fence.LeaseID); err != nil {
		t.Fatal(err)
	}
	if hb, err := wa.Heartbeat(ctx, *ca.Fence); err != nil || hb.Success || hb.Result != "refused" {
		t.Fatalf("host-a's heartbeat past expiry at the DB clock: %+v %v", hb, err)
	} else {
		t.Logf("host-a's heartbeat past expiry: %s: %s", hb.Code, hb.Message)
	}
	if out, err := b.run(t, bin, "lease", "reclaim-expired", "--lease", ca.Fence.LeaseID); err != nil {
		t.Fatalf("host-b reclaims host-a's expired lease: %v\n%s", err, out)
	}
	wb2 := connect(b, "b-w2")
	cb2, err := wb2.Claim(ctx, mcp.ClaimArgs{Item: b.env.Item(7), PID: int64(pb.Process.Pid)})
	if err != nil || !cb2.Success {
		t.Fatalf("host-b claims the reclaimed item: %+v %v", cb2, err)
	}
	if cb2.Fence.LeaseGeneration <= ca.Fence.LeaseGeneration {
		t.Errorf("lease_generation_id %d after %d: the generation must move", cb2.Fence.LeaseGeneration, ca.Fence.LeaseGeneration)
	}
	if rel, err := wa.Release(ctx, *ca.Fence); err != nil || rel.Success || rel.Result != "refused" {
		t.Fatalf("host-a's stale release: %+v %v", rel, err)
	}
	var active int
	var holder sql.NullString
	if err := db.QueryRow(`SELECT count(*), max(owner_host) FROM leases WHERE status = 'active'
		AND work_item_id = (SELECT work_item_id FROM leases WHERE lease_id = $1)`, ca.Fence.LeaseID).Scan(&active, &holder); err != nil {
		t.Fatal(err)
	}
	if active != 1 || holder.String != "host-b" {
		t.Errorf("item 7: %d active leases, held by %q; want one, host-b's", active, holder.String)
	}
	check(b, cb2, "alive", "")
	check(a, cb2, "unknown", "host-b")
	a.env.OneTerminal(t)
	b.env.OneTerminal(t)
}
