package live_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"syscall"
	"testing"
	"time"

	"steward/leases"
	"steward/leases/leaserec"
	"steward/leases/leasestest"
	"steward/locks"
	"steward/locks/lockrec"
	"steward/model"
	"steward/model/live"
)

var benchNow = leasestest.Now

// benchWorkspace writes n canonical lock files and n active leases (one per
// issue, agreeing with each other), all owned by foreign-host records so no
// liveness probe runs.
func benchWorkspace(b *testing.B, n int) live.Workspace {
	b.Helper()
	dir := b.TempDir()
	ws := live.Workspace{LocksDir: filepath.Join(dir, "locks"), DBPath: leasestest.NewDB(b, nil, nil), RepoRoot: filepath.Join(dir, "repo")}
	os.MkdirAll(ws.LocksDir, 0o700)
	for i := 1; i <= n; i++ {
		writeLock(b, ws.LocksDir, int64(i), benchNow.Add(time.Hour))
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
		mustExec(b, tx, `INSERT INTO sessions(session_id, role, profile, pid, host, status, started_at, last_heartbeat_at) VALUES(?,?,?,?,?,?,?,?)`,
			sid, "author", "p", 100+i, "elsewhere", "active", ts, ts)
		mustExec(b, tx, `INSERT INTO work_items(work_item_id, remote, org, repo, work_kind, work_number, title, state) VALUES(?,?,?,?,?,?,?,?)`,
			i, "origin", "acme", "widgets", "issue", i, "t", "open")
		mustExec(b, tx, `INSERT INTO leases(lease_id, work_item_id, session_id, role, task_class, phase, status, created_at, expires_at, last_heartbeat_at, heartbeat_count, owner_pid, owner_host, worktree_path)
			VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?)`, fmt.Sprintf("lease-%d", i), i, sid, "author", "author_issue_work", "implementing", "active", ts, exp, ts, 1, 100+i, "elsewhere", "/x")
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	return ws
}

func mustExec(b *testing.B, tx *sql.Tx, q string, args ...any) {
	if _, err := tx.Exec(q, args...); err != nil {
		b.Fatal(err)
	}
}

func writeLock(b testing.TB, dir string, n int64, exp time.Time) string {
	one := int64(1)
	c := lockrec.NewTimestamp(benchNow)
	rec := lockrec.Record{Remote: "origin", Org: "acme", Repo: "widgets", IssueNumber: &n, BranchName: "b", Branch: "b", WorktreePath: "/x",
		WorkLease: &lockrec.WorkLease{OperationType: "author_issue_work", IssueNumber: &n, Branch: "b", WorktreePath: "/x",
			Claimant: &lockrec.Claimant{Username: "u", Profile: "p"}, CreatedAt: c, ExpiresAt: lockrec.NewTimestamp(exp), LastHeartbeatAt: c,
			HeartbeatCount: &one, TaskSessionID: "t", LifecycleVersion: "heartbeat-v1"},
		LockProvenance: &lockrec.Provenance{Source: "gitea_lock_issue", WrittenByTool: "bench"},
		OwnerSession:   fmt.Sprintf("s%d", n), LeaseID: fmt.Sprintf("lease-%d", n),
		Extra: []lockrec.RawField{{Key: "host", Value: []byte(`"elsewhere"`)}}}
	data, err := lockrec.Marshal(&rec)
	if err != nil {
		b.Fatal(err)
	}
	name, _ := locks.Name(lockrec.Key{Remote: "origin", Org: "acme", Repo: "widgets", Issue: n})
	tmp := filepath.Join(dir, ".tmp-"+name)
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		b.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		b.Fatal(err)
	}
	return name
}

func BenchmarkColdSnapshot(b *testing.B) {
	for _, n := range []int{100, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			ws := benchWorkspace(b, n)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				s := model.Build(live.Load(context.Background(), ws, live.NewProbe(ws.RepoRoot), benchNow), model.Config{}, benchNow)
				if len(s.Claims) != n {
					b.Fatalf("claims = %d", len(s.Claims))
				}
			}
		})
	}
}

func startLive(b *testing.B, ws live.Workspace) *live.Model {
	l := live.New(ws, live.Options{Now: func() time.Time { return benchNow }})
	if err := l.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	return l
}

// waitClaim waits until the snapshot shows item n expiring at exp.
func waitClaim(b *testing.B, l *live.Model, n int64, exp time.Time) {
	deadline := time.After(10 * time.Second)
	for {
		if s := l.Current(); s != nil {
			i := sort.Search(len(s.Claims), func(i int) bool { return s.Claims[i].Item.Number >= n })
			if i < len(s.Claims) && s.Claims[i].Item.Number == n && hasEvidence(s.Claims[i], lockrec.FormatTime(exp)) {
				return
			}
		}
		select {
		case <-l.Snapshots():
		case <-deadline:
			b.Fatalf("no snapshot with #%d expiring %s", n, exp)
		}
	}
}

func hasEvidence(c *model.Claim, v string) bool {
	for _, e := range c.Evidence {
		if e.Field == "work_lease.expires_at" && len(e.Value) >= len(v) && e.Value[:len(v)] == v {
			return true
		}
	}
	return false
}

func percentiles(ds []time.Duration) (p50, p99 time.Duration) {
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[len(ds)/2], ds[len(ds)*99/100]
}

// BenchmarkLockRename measures one lock file's rename → updated snapshot, at
// 100 and 10,000 items in one run (p50/p99 over ≥200 changes).
func BenchmarkLockRename(b *testing.B) {
	for _, n := range []int{100, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			ws := benchWorkspace(b, n)
			l := startLive(b, ws)
			defer l.Close()
			var lat []time.Duration
			rounds := max(b.N, 200)
			cpu0 := cpuTime()
			b.ResetTimer()
			for i := 0; i < rounds; i++ {
				k := int64(i%n + 1)
				exp := benchNow.Add(time.Hour + time.Duration(i+1)*time.Second)
				t0 := time.Now()
				writeLock(b, ws.LocksDir, k, exp)
				waitClaim(b, l, k, exp)
				lat = append(lat, time.Since(t0))
			}
			report(b, lat, cpuTime()-cpu0, rounds)
		})
	}
}

// cpuTime is the process's user+system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkDBCommit measures one DB commit → the updated snapshot, at 100 and
// 10,000 leases in one run (p50/p99 over ≥200 commits). The commit is a
// lease renewal through leases.Store.Heartbeat, as a worker writes it: the
// lease and its session updated and a lease.renew event, in one transaction.
// Live re-reads only the renewed item's leases and sessions (a scoped read).
func BenchmarkDBCommit(b *testing.B) {
	for _, n := range []int{100, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			ws := benchWorkspace(b, n)
			l := startLive(b, ws)
			defer l.Close()
			st, err := leases.OpenReadWrite(ws.DBPath, leases.StoreOptions{})
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			ctx := context.Background()
			fences := map[int64]leases.Fence{}
			var lat []time.Duration
			rounds := max(b.N, 200)
			cpu0 := cpuTime()
			b.ResetTimer()
			for i := 0; i < rounds; i++ {
				k := int64(i%n + 1)
				f, ok := fences[k]
				if !ok {
					f = leases.Fence{LeaseID: fmt.Sprintf("lease-%d", k), Status: leaserec.StatusActive, SessionID: fmt.Sprintf("s%d", k),
						ExpiresAt: leaserec.FormatTime(benchNow.Add(time.Hour))}
				}
				t0 := time.Now()
				out, err := st.Heartbeat(ctx, f, benchNow.Add(time.Duration(i+1)*time.Second))
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

// BenchmarkDBCommitForeign measures a commit that writes no event (another
// writer's UPDATE of one lease's expiry): data_version moves with no event,
// so Live re-reads the leases/sessions snapshot in full — the fallback, whose
// cost grows with the table.
func BenchmarkDBCommitForeign(b *testing.B) {
	for _, n := range []int{100, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			ws := benchWorkspace(b, n)
			l := startLive(b, ws)
			defer l.Close()
			db, err := sql.Open("sqlite", ws.DBPath+"?_pragma=busy_timeout(5000)")
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			var lat []time.Duration
			rounds := max(b.N, 200)
			cpu0 := cpuTime()
			b.ResetTimer()
			for i := 0; i < rounds; i++ {
				k := int64(i%n + 1)
				exp := benchNow.Add(2*time.Hour + time.Duration(i+1)*time.Second)
				t0 := time.Now()
				if _, err := db.Exec(`UPDATE leases SET expires_at = ? WHERE lease_id = ?`, leaserec.FormatTime(exp), fmt.Sprintf("lease-%d", k)); err != nil {
					b.Fatal(err)
				}
				waitLeaseExpiry(b, l, k, exp)
				lat = append(lat, time.Since(t0))
			}
			report(b, lat, cpuTime()-cpu0, rounds)
		})
	}
}

// report adds the latency percentiles and the CPU per change.
func report(b *testing.B, lat []time.Duration, cpu time.Duration, rounds int) {
	p50, p99 := percentiles(lat)
	b.ReportMetric(float64(p50.Microseconds()), "p50-µs")
	b.ReportMetric(float64(p99.Microseconds()), "p99-µs")
	b.ReportMetric(float64(cpu.Microseconds())/float64(rounds), "cpu-µs/change")
}

func waitLeaseExpiry(b *testing.B, l *live.Model, n int64, exp time.Time) {
	deadline := time.After(10 * time.Second)
	for {
		if s := l.Current(); s != nil {
			i := sort.Search(len(s.Claims), func(i int) bool { return s.Claims[i].Item.Number >= n })
			if i < len(s.Claims) && s.Claims[i].Item.Number == n && s.Claims[i].ExpiresAt.Equal(exp) {
				return
			}
		}
		select {
		case <-l.Snapshots():
		case <-deadline:
			b.Fatalf("no snapshot with lease of #%d expiring %s", n, exp)
		}
	}
}

// BenchmarkIdleCPU measures the CPU a Live over 10,000 locks and leases uses
// while nothing changes, over STEWARD_IDLE_SECONDS (default 30) of wall time.
// The wait is the measurement window, not synchronisation.
func BenchmarkIdleCPU(b *testing.B) {
	secs := 30
	if v := os.Getenv("STEWARD_IDLE_SECONDS"); v != "" {
		fmt.Sscan(v, &secs)
	}
	ws := benchWorkspace(b, 10000)
	l := startLive(b, ws)
	defer l.Close()
	b.ResetTimer()
	cpu0, t0 := cpuTime(), time.Now()
	time.Sleep(time.Duration(secs) * time.Second)
	cpu, wall := cpuTime()-cpu0, time.Since(t0)
	b.ReportMetric(100*float64(cpu)/float64(wall), "%-of-one-core")
}
