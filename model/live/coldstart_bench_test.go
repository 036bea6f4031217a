package live_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"steward/leases"
	"steward/leases/leaserec"
	"steward/locks"
	"steward/locks/lockrec"
	"steward/model"
	"steward/model/live"
)

// localWorkspace writes n claims owned by this process on this host — a canonical lock
// file, a session, an active lease and a worktree directory under <repo>/branches each —
// so that a cold start probes every owner and worktree, as a local fleet's does.
func localWorkspace(b *testing.B, n int) live.Workspace {
	b.Helper()
	dir := b.TempDir()
	host, err := leases.HostName()
	if err != nil {
		b.Fatal(err)
	}
	pid := int64(os.Getpid())
	ws := benchWorkspace(b, 0)
	ws.RepoRoot = filepath.Join(dir, "repo")
	hostJSON := []byte(fmt.Sprintf("%q", host))
	one := int64(1)
	c := lockrec.NewTimestamp(benchNow)
	for i := int64(1); i <= int64(n); i++ {
		wt := filepath.Join(ws.RepoRoot, "branches", fmt.Sprintf("issue-%d", i))
		if err := os.MkdirAll(wt, 0o700); err != nil {
			b.Fatal(err)
		}
		num := i
		rec := lockrec.Record{Remote: "origin", Org: "acme", Repo: "widgets", IssueNumber: &num, BranchName: "b", Branch: "b", WorktreePath: wt, PID: &pid,
			WorkLease: &lockrec.WorkLease{OperationType: "author_issue_work", IssueNumber: &num, Branch: "b", WorktreePath: wt,
				Claimant: &lockrec.Claimant{Username: "u", Profile: "p"}, CreatedAt: c, ExpiresAt: lockrec.NewTimestamp(benchNow.Add(time.Hour)), LastHeartbeatAt: c,
				HeartbeatCount: &one, TaskSessionID: "t", LifecycleVersion: "heartbeat-v1"},
			LockProvenance: &lockrec.Provenance{Source: "gitea_lock_issue", WrittenByTool: "bench"},
			OwnerSession:   fmt.Sprintf("s%d", i), LeaseID: fmt.Sprintf("lease-%d", i),
			Extra: []lockrec.RawField{{Key: "host", Value: hostJSON}}}
		data, err := lockrec.Marshal(&rec)
		if err != nil {
			b.Fatal(err)
		}
		name, _ := locks.Name(lockrec.Key{Remote: "origin", Org: "acme", Repo: "widgets", Issue: i})
		if err := os.WriteFile(filepath.Join(ws.LocksDir, name), data, 0o600); err != nil {
			b.Fatal(err)
		}
	}
	db, err := sql.Open("sqlite", ws.DBPath+"?_pragma=busy_timeout(5000)")
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	tx, _ := db.Begin()
	ts := leaserec.FormatTime(benchNow)
	exp := leaserec.FormatTime(benchNow.Add(time.Hour))
	for i := 1; i <= n; i++ {
		sid := fmt.Sprintf("s%d", i)
		wt := filepath.Join(ws.RepoRoot, "branches", fmt.Sprintf("issue-%d", i))
		mustExec(b, tx, `INSERT INTO sessions(session_id, role, profile, pid, host, status, started_at, last_heartbeat_at) VALUES(?,?,?,?,?,?,?,?)`,
			sid, "author", "p", pid, host, "active", ts, ts)
		mustExec(b, tx, `INSERT INTO work_items(work_item_id, remote, org, repo, work_kind, work_number, title, state) VALUES(?,?,?,?,?,?,?,?)`,
			i, "origin", "acme", "widgets", "issue", i, "t", "open")
		mustExec(b, tx, `INSERT INTO leases(lease_id, work_item_id, session_id, role, task_class, phase, status, created_at, expires_at, last_heartbeat_at, heartbeat_count, owner_pid, owner_host, worktree_path)
			VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?)`, fmt.Sprintf("lease-%d", i), i, sid, "author", "author_issue_work", "implementing", "active", ts, exp, ts, 1, pid, host, wt)
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	return ws
}

// BenchmarkColdStart is the live model's cold start on local fleets of 1,000 and 10,000 claims:
// New + Start until the first snapshot (first-ms: when Start returns, the snapshot
// published), and until the snapshot in which every owner has been probed (probed-ms);
// the process's CPU time per start (cpu-ms/op, user + system: garbage collection and
// every core included, unlike the wall times on a shared machine); allocations; and the
// heap still in use once the model holds the probed snapshot (live-MB, after a GC). Per
// claim (live-B/claim, alloc-B/claim) the two sizes show whether memory grows at most
// linearly with the fleet: the figures stay flat from 1,000 to 10,000 when it does.
func BenchmarkColdStart(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			ws := localWorkspace(b, n)
			b.ReportAllocs()
			b.ResetTimer()
			var first, probed, cpu time.Duration
			var live_, alloc uint64
			for range b.N {
				runtime.GC()
				var m0 runtime.MemStats
				runtime.ReadMemStats(&m0)
				cpu0, t0 := cpuTime(), time.Now()
				l := live.New(ws, live.Options{Now: func() time.Time { return benchNow }})
				if err := l.Start(context.Background()); err != nil {
					b.Fatal(err)
				}
				first += time.Since(t0)
				for s := l.Current(); !allProbed(s, n); s = l.Current() {
					select {
					case <-l.Snapshots():
					case <-time.After(time.Minute): // a hang detector
						b.Fatal("no probed snapshot")
					}
				}
				probed += time.Since(t0)
				cpu += cpuTime() - cpu0
				b.StopTimer()
				runtime.GC()
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				live_ += ms.HeapAlloc
				alloc += ms.TotalAlloc - m0.TotalAlloc
				l.Close()
				b.StartTimer()
			}
			k := float64(b.N)
			b.ReportMetric(float64(first.Milliseconds())/k, "first-ms")
			b.ReportMetric(float64(probed.Milliseconds())/k, "probed-ms")
			b.ReportMetric(float64(cpu.Milliseconds())/k, "cpu-ms/op")
			b.ReportMetric(float64(live_)/k/1e6, "live-MB")
			b.ReportMetric(float64(live_)/k/float64(n), "live-B/claim")
			b.ReportMetric(float64(alloc)/k/float64(n), "alloc-B/claim")
		})
	}
}

// allProbed reports whether s has n claims, every owner seen alive.
func allProbed(s *model.Snapshot, n int) bool {
	if s == nil || len(s.Claims) != n {
		return false
	}
	for _, c := range s.Claims {
		if c.OwnerLiveness != model.LivenessAlive {
			return false
		}
	}
	return true
}
