package live_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"steward/leases"
	"steward/leases/pgtest"
	"steward/model/live"
)

// pgBenchWorkspace is benchWorkspace on PostgreSQL: n lock files and n active leases on a
// database steward initialised, the leases stamped by the DB's clock (its transitions
// judge expiry by it).
func pgBenchWorkspace(b *testing.B, n int) live.Workspace {
	b.Helper()
	u := pgtest.NewDBFrom(b, "steward", func(url string) error {
		_, err := leases.InitPG(context.Background(), leases.Target{Loc: url})
		return err
	})
	dir := b.TempDir()
	ws := live.Workspace{LocksDir: filepath.Join(dir, "locks"), DBPath: u, RepoRoot: filepath.Join(dir, "repo")}
	os.MkdirAll(ws.LocksDir, 0o700)
	for i := 1; i <= n; i++ {
		writeLock(b, ws.LocksDir, int64(i), benchNow.Add(time.Hour))
	}
	pgtest.Exec(b, u, `INSERT INTO sessions(session_id, role, profile, pid, host, status, started_at, last_heartbeat_at)
		SELECT 's'||i, 'author', 'p', 100+i, 'elsewhere', 'active', now(), now() FROM generate_series(1, $1::int) AS i`, n)
	pgtest.Exec(b, u, `INSERT INTO work_items(work_item_id, remote, org, repo, work_kind, work_number, title, state)
		SELECT i, 'origin', 'acme', 'widgets', 'issue', i, 't', 'open' FROM generate_series(1, $1::int) AS i`, n)
	pgtest.Exec(b, u, `INSERT INTO leases(lease_id, work_item_id, session_id, role, task_class, phase, status, created_at, expires_at,
		last_heartbeat_at, heartbeat_count, owner_pid, owner_host, worktree_path)
		SELECT 'lease-'||i, i, 's'||i, 'author', 'author_issue_work', 'implementing', 'active', now(), now() + interval '1 hour',
		now(), 1, 100+i, 'elsewhere', '/x' FROM generate_series(1, $1::int) AS i`, n)
	return ws
}

// BenchmarkDBCommitPG is BenchmarkDBCommit on PostgreSQL: a worker's heartbeat commits,
// its notice reaches the live model (LISTEN), which re-reads the one item — commit →
// snapshot, at 100 and 10,000 claims. Compare its p99 with BenchmarkDBCommit's (the
// SQLite path: file watch and data_version) of the same run.
func BenchmarkDBCommitPG(b *testing.B) {
	for _, n := range []int{100, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			ws := pgBenchWorkspace(b, n)
			l := startLive(b, ws)
			defer l.Close()
			st, err := leases.OpenPGStore(context.Background(), ws.DBTarget(), leases.StoreOptions{})
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			ctx := context.Background()
			fences := pgFences(b, ws)
			var lat []time.Duration
			rounds := max(b.N, 200)
			cpu0 := cpuTime()
			b.ResetTimer()
			for i := 0; i < rounds; i++ {
				k := int64(i%n + 1)
				f := fences[k]
				t0 := time.Now()
				out, err := st.Heartbeat(ctx, f, time.Time{})
				if err != nil || !out.OK() {
					b.Fatalf("heartbeat: %v %+v", err, out)
				}
				waitLeaseExpiry(b, l, k, out.Lease.ExpiresAt.Time)
				lat = append(lat, time.Since(t0))
				fences[k] = leases.FenceOf(*out.Lease)
			}
			report(b, lat, cpuTime()-cpu0, rounds)
		})
	}
}

// pgFences reads every lease's fence as a worker holds it.
func pgFences(b *testing.B, ws live.Workspace) map[int64]leases.Fence {
	b.Helper()
	r, err := leases.OpenReader(ws.DBTarget())
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	s, err := r.Snapshot(context.Background(), leases.ReadOptions{})
	if err != nil {
		b.Fatal(err)
	}
	out := make(map[int64]leases.Fence, len(s.Leases))
	for _, l := range s.Leases {
		out[l.WorkItemID] = leases.FenceOf(l)
	}
	return out
}
