package reliability_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"runtime/pprof"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"steward/gitea"
	"steward/gitea/fakegitea"
	"steward/gitea/gitearec"
	"steward/govern"
	"steward/leases/leaserec"
	"steward/locks"
	"steward/locks/lockrec"
	"steward/model"
	"steward/model/live"
	"steward/sim"
)

// The load run's size. CI runs it compressed for STEWARD_LOAD_FOR (default 25 s of wall
// time); the documented full run is STEWARD_LOAD_FOR=10m (docs/reliability.md).
func loadParams() (dur time.Duration, workers, items int, speed float64) {
	dur, workers, items, speed = 25*time.Second, 50, 500, 20
	if v, err := time.ParseDuration(os.Getenv("STEWARD_LOAD_FOR")); err == nil && v > 0 {
		dur = v
	}
	if v, err := strconv.Atoi(os.Getenv("STEWARD_LOAD_WORKERS")); err == nil && v > 0 {
		workers = v
	}
	if v, err := strconv.Atoi(os.Getenv("STEWARD_LOAD_ITEMS")); err == nil && v > 0 {
		items = v
	}
	if v, err := strconv.ParseFloat(os.Getenv("STEWARD_LOAD_SPEED"), 64); err == nil && v > 1 {
		speed = v
	}
	return
}

// cachedTracker answers a worker's backlog reads from a copy at most ttl old: 50 workers
// each listing 500 issues per cycle over HTTP would measure the fake server, not steward.
type cachedTracker struct {
	c   *gitea.Client
	ttl time.Duration
	mu  sync.Mutex
	at  time.Time
	is  []gitearec.Issue
}

func (t *cachedTracker) OpenIssues(ctx context.Context) ([]gitearec.Issue, gitea.Health) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.is != nil && time.Since(t.at) < t.ttl {
		return t.is, gitea.Health{State: gitea.HealthOK}
	}
	is, h := t.c.OpenIssues(ctx)
	if !h.OK() {
		return nil, h
	}
	t.at, t.is = time.Now(), is
	return is, h
}

// loadReport is what a load run measured (recorded in docs/reliability.md).
type loadReport struct {
	Wall               string           `json:"wall"`
	Workers            int              `json:"workers"`
	Items              int              `json:"items"`
	Speed              float64          `json:"speed"`
	Events             map[string]int   `json:"fleet_events"`
	Second             supervisorReport `json:"second_steward"`
	Checks             int              `json:"invariant_checks"`
	MaxActiveLeases    int              `json:"max_active_leases_seen"`
	MaxLiveLocks       int              `json:"max_live_locks_seen"`
	Snapshots          int              `json:"live_snapshots"`
	Attempts           int              `json:"audit_attempts"`
	Succeeded          int              `json:"audit_succeeded"`
	GoroutinesBefore   int              `json:"goroutines_before"`
	GoroutinesAfter    int              `json:"goroutines_after"`
	RSSWarmKiB         int64            `json:"steward_rss_after_warmup_kib"`
	RSSEndKiB          int64            `json:"steward_rss_end_kib"`
	RSSMaxKiB          int64            `json:"steward_rss_max_kib"`
	RSSGrowthPct       float64          `json:"steward_rss_growth_pct"`
	HeapWarmKiB        int64            `json:"steward_heap_after_warmup_kib"`
	HeapEndKiB         int64            `json:"steward_heap_end_kib"`
	HeapGrowthPct      float64          `json:"steward_heap_growth_pct"`
	RaceDetector       bool             `json:"race_detector"`
	RSSSamplesKiB      []int64          `json:"steward_rss_samples_kib"`
	HeapSamplesKiB     []int64          `json:"steward_heap_samples_kib"`
	FleetRSSWarmKiB    int64            `json:"fleet_process_rss_after_warmup_kib"`
	FleetRSSEndKiB     int64            `json:"fleet_process_rss_end_kib"`
	FleetRSSGrowthPct  float64          `json:"fleet_process_rss_growth_pct"`
	FleetHeapWarmKiB   int64            `json:"fleet_process_heap_after_warmup_kib"`
	FleetHeapEndKiB    int64            `json:"fleet_process_heap_end_kib"`
	FleetHeapGrowthPct float64          `json:"fleet_process_heap_growth_pct"`
	SnapshotAgeMaxSecs float64          `json:"live_snapshot_gap_max_s"`
	// The workspace's size as the live model saw it (claims, orphans, sessions) at the end
	// of warm-up and at the end: steward's memory follows it.
	StateWarm [3]int `json:"state_after_warmup_claims_orphans_sessions"`
	// The leak check (second steward): its model's heap after the run, a fresh model's on
	// the same workspace, and their ratio.
	LeakLongKiB  int64   `json:"steward_model_after_run_kib"`
	LeakFreshKiB int64   `json:"steward_fresh_model_kib"`
	LeakRatio    float64 `json:"steward_model_vs_fresh"`
	// Drift counts the differences between the long-running model and a fresh one.
	Drift int `json:"steward_model_drift"`
	// StateGrowthPct is how much the workspace grew after warm-up.
	StateGrowthPct float64 `json:"state_growth_pct"`
	StateEnd       [3]int  `json:"state_end_claims_orphans_sessions"`
}

// TestLoad runs the simulated fleet — 50 workers, 500 items, time compressed 20× — while a
// second steward process recovers orphans and claims on the same workspace and a live
// model watches it all. Throughout: never two active leases on one item, never two live
// locks for one item, no collision in any live snapshot. Afterwards: every audited attempt
// has exactly one terminal record, no goroutine outlives the run, and resident memory grew
// less than 10% after warm-up.
func TestLoad(t *testing.T) {
	dur, workers, items, speed := loadParams()
	rep := loadReport{Wall: dur.String(), Workers: workers, Items: items, Speed: speed}
	rep.GoroutinesBefore = runtime.NumGoroutine()
	ctx := context.Background()
	dir := t.TempDir()
	ws := govern.Workspace{LocksDir: filepath.Join(dir, "locks"), DBPath: filepath.Join(dir, "control-plane", "control_plane.sqlite3"),
		RepoRoot: filepath.Join(dir, "repo"), Env: sim.Lookup(sim.PolicyEnv(speed), nil)}
	auditPath := filepath.Join(dir, "audit.jsonl")
	must(t, govern.InitWorkspace(ws))
	audit, err := govern.OpenAudit(auditPath, nil)
	must(t, err)

	fake := fakegitea.New()
	srv := httptest.NewServer(fake)
	fake.SetBaseURL(srv.URL)
	fake.AddUser("load", "load-token-0123456789")
	repo := fake.CreateRepo("load", "fleet")
	backlog := sim.SeedFake(repo, "maintainer", sim.Backlog(9, items), nil)
	tr := &http.Transport{}
	client, err := gitea.New(gitea.Config{Login: gitea.Login{URL: srv.URL, Token: gitea.NewToken("load-token-0123456789")},
		Owner: "load", Repo: "fleet", RequestTimeout: 10 * time.Second, Transport: tr})
	must(t, err)
	ws.Gitea = client
	fleet, err := sim.New(sim.Config{Workspace: ws, Audit: audit, Owner: "load", Repo: "fleet", Backlog: backlog,
		Tracker: &cachedTracker{c: client, ttl: 5 * time.Second},
		PRs:     sim.FakePRs(repo), Workers: workers, Seed: 9, Speed: speed})
	must(t, err)

	// The live model, as the workbench runs it, with the compressed policy.
	live := live.New(live.Workspace{LocksDir: ws.LocksDir, DBPath: ws.DBPath, RepoRoot: ws.RepoRoot},
		live.Options{Config: model.Config{Policies: leaserec.LoadPolicies(ws.Env), Org: "load", Repo: "fleet"}, Resync: 5 * time.Second})
	must(t, live.Start(ctx))
	var collisions []string
	var snapMu sync.Mutex
	liveDone := make(chan struct{})
	go func() {
		defer close(liveDone)
		last := time.Now()
		warm := time.Now().Add(time.Duration(float64(workers)*float64(5*time.Second)/speed) + dur/4)
		for s := range live.Snapshots() {
			snapMu.Lock()
			st := [3]int{len(s.Claims), len(s.Orphans), len(s.Sessions)}
			if time.Now().Before(warm) || rep.StateWarm == [3]int{} {
				rep.StateWarm = st
			}
			rep.StateEnd = st
			rep.Snapshots++
			rep.SnapshotAgeMaxSecs = max(rep.SnapshotAgeMaxSecs, time.Since(last).Seconds())
			last = time.Now()
			for _, c := range s.Contention {
				if c.Kind == model.ContentionDuplicateLiveLock || c.Kind == model.ContentionConcurrentActiveLease {
					collisions = append(collisions, string(c.Kind)+" on "+c.Item.String())
				}
			}
			snapMu.Unlock()
		}
	}()

	// The second steward process.
	cw, _ := json.Marshal(childWorkspace{LocksDir: ws.LocksDir, DBPath: ws.DBPath, RepoRoot: ws.RepoRoot, Speed: speed, Org: "load", Repo: "fleet", Items: items})
	fleetStopped, tell := io.Pipe()
	second, secondOut := childIn(t, fleetStopped, "supervisor", "CHILD_WS="+string(cw), "CHILD_AUDIT="+auditPath, "CHILD_FOR="+dur.String())
	secondReport := make(chan supervisorReport, 1)
	go func() { // read its output as it comes: Wait closes the pipe
		var sr supervisorReport
		for {
			line, err := secondOut.ReadString('\n')
			if strings.HasPrefix(line, "{") {
				_ = json.Unmarshal([]byte(line), &sr)
			}
			if err != nil {
				secondReport <- sr
				return
			}
		}
	}()

	// The invariants, checked while everything runs.
	stop := make(chan struct{})
	checked := make(chan error, 1)
	var rss, heap []int64
	var sampledAt []time.Duration
	runStart := time.Now()
	go func() {
		var first error
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		sample := time.NewTicker(min(dur/40, 5*time.Second))
		defer sample.Stop()
		for {
			select {
			case <-stop:
				checked <- first
				return
			case <-sample.C:
				r, h := memKiB()
				rss, heap, sampledAt = append(rss, r), append(heap, h), append(sampledAt, time.Since(runStart))
			case <-tick.C:
				if err := checkInvariants(ws, &rep); err != nil && first == nil {
					first = err
				}
			}
		}
	}()

	t0 := time.Now()
	sum, err := fleet.Run(ctx, dur)
	must(t, err)
	t.Logf("fleet ran %s of wall time (asked %s)", time.Since(t0), dur)
	go func() { _, _ = io.WriteString(tell, "fleet stopped\n"); tell.Close() }()
	sr := <-secondReport
	must(t, second.Wait())
	t.Logf("second steward done after %s", time.Since(t0))
	close(stop)
	if err := <-checked; err != nil {
		t.Error(err)
	}
	if err := checkInvariants(ws, &rep); err != nil {
		t.Error(err)
	}
	rep.Second = sr
	rep.Events = map[string]int{}
	for k, v := range sum.Counts {
		rep.Events[string(k)] = v
	}

	// Every attempt, by either process, has exactly one terminal record.
	recs, finds, err := govern.ReadAudit(auditPath)
	must(t, err)
	if len(finds) > 0 {
		t.Errorf("audit findings (torn or undecodable lines): %+v", finds)
	}
	for _, a := range govern.Attempts(recs) {
		rep.Attempts++
		if a.Outcomes != 1 {
			t.Errorf("attempt %s (%s) has %d terminal records", a.ID, actionOf(a), a.Outcomes)
		}
		if a.Status() == govern.ResultSucceeded {
			rep.Succeeded++
		}
	}
	snapMu.Lock()
	if len(collisions) > 0 {
		t.Errorf("the live model saw collisions: %q", collisions)
	}
	snapMu.Unlock()

	// Memory. The process to judge is the second steward: it is steward — a live model as
	// the workbench runs it, a governed core, the status read — for the whole run, while
	// this process also holds the simulated fleet (its event log, fifty workers' cores and
	// SQLite caches) and the fake Gitea, which grow with the run by design. Warm-up lasts
	// until every worker is up plus a quarter of the run; each point is the floor of five
	// samples. The live heap (as the GC marked it) is bounded by 10% (25% on a short run,
	// which is still touching items for the first time); the resident set by 10% without
	// the race detector (under it, shadow memory the runtime never returns is included; it
	// is reported). This process's numbers are reported too.
	rep.RaceDetector, rep.RSSSamplesKiB, rep.HeapSamplesKiB = raceEnabled, sr.RSSKiB, sr.HeapKiB
	boot := time.Duration(float64(workers) * float64(5*time.Second) / speed)
	warmUntil := (boot + dur/4).Seconds()
	floor := func(at []float64, v []int64) (int64, int64, float64, bool) {
		w := sort.Search(len(at), func(i int) bool { return at[i] >= warmUntil })
		if len(v) != len(at) || len(v)-w < 10 {
			return 0, 0, 0, false
		}
		a, b := slices.Min(v[w:w+5]), slices.Min(v[len(v)-5:])
		return a, b, 100 * float64(b-a) / float64(a), true
	}
	var ok bool
	rep.RSSWarmKiB, rep.RSSEndKiB, rep.RSSGrowthPct, ok = floor(sr.MemAt, sr.RSSKiB)
	rep.HeapWarmKiB, rep.HeapEndKiB, rep.HeapGrowthPct, _ = floor(sr.MemAt, sr.HeapKiB)
	if !ok {
		t.Errorf("too few memory samples of the second steward after warm-up (%.0f s): %d", warmUntil, len(sr.MemAt))
	} else {
		rep.RSSMaxKiB = slices.Max(sr.RSSKiB)
		heapBound := 10.0
		if dur < 5*time.Minute {
			heapBound = 25
		}
		// The resident set: under 10% growth after warm-up, whatever the workspace did
		// (without the race detector; under it, shadow memory the runtime never returns is
		// included: reported).
		if !raceEnabled && rep.RSSGrowthPct >= 10 {
			t.Errorf("steward's resident memory grew %.1f%% after warm-up (%d → %d KiB)", rep.RSSGrowthPct, rep.RSSWarmKiB, rep.RSSEndKiB)
		}
		// The live heap is a few MiB and follows the workspace (claims, orphans, sessions the
		// model holds): bounded while the workspace stayed within 10% of its size at warm-up;
		// past that it cannot tell growth from a leak, and the leak check below holds instead.
		sum := func(a [3]int) int { return a[0] + a[1] + a[2] }
		snapMu.Lock()
		warmState, endState := rep.StateWarm, rep.StateEnd
		snapMu.Unlock()
		rep.StateGrowthPct = 100 * float64(sum(endState)-sum(warmState)) / float64(max(sum(warmState), 1))
		switch {
		case rep.StateGrowthPct >= 10:
			t.Logf("the workspace grew %.0f%% after warm-up (%v → %v): the live heap's growth (%.1f%%) is judged by the leak check",
				rep.StateGrowthPct, warmState, endState, rep.HeapGrowthPct)
		case rep.HeapGrowthPct >= heapBound:
			t.Errorf("steward's live heap grew %.1f%% after warm-up (%d → %d KiB), bound %.0f%%", rep.HeapGrowthPct, rep.HeapWarmKiB, rep.HeapEndKiB, heapBound)
		}
	}
	// Incremental updates add up: once the fleet stopped, the model that followed the whole
	// run shows exactly what a model started fresh on the same workspace shows.
	rep.Drift = len(sr.Drift)
	if len(sr.Drift) > 0 {
		t.Errorf("the long-running live model drifted from a fresh read (%d differences):\n%s", len(sr.Drift), strings.Join(sr.Drift[:min(len(sr.Drift), 40)], "\n"))
	}
	// The leak check, which holds whatever the workspace did meanwhile: the model that ran
	// through the load holds at most 10% (and 1 MiB of slack for what a run leaves in
	// bounded caches) more than a model started fresh on the same workspace.
	long, fresh := sr.HeapBothKiB-sr.HeapFreshOnlyKiB, sr.HeapBothKiB-sr.HeapLongKiB
	rep.LeakLongKiB, rep.LeakFreshKiB = long, fresh
	if fresh > 0 {
		rep.LeakRatio = float64(long) / float64(fresh)
	}
	if fresh <= 0 || float64(long) > 1.10*float64(fresh)+1024 {
		t.Errorf("the long-running model holds %d KiB, a fresh one on the same workspace %d KiB (state %v vs %v): a leak",
			long, fresh, sr.StateLong, sr.StateFresh)
	}
	at := make([]float64, len(sampledAt))
	for i, d := range sampledAt {
		at[i] = d.Seconds()
	}
	rep.FleetRSSWarmKiB, rep.FleetRSSEndKiB, rep.FleetRSSGrowthPct, _ = floor(at, rss)
	rep.FleetHeapWarmKiB, rep.FleetHeapEndKiB, rep.FleetHeapGrowthPct, _ = floor(at, heap)

	if p := os.Getenv("STEWARD_LOAD_HEAPPROFILE"); p != "" {
		runtime.GC()
		f, err := os.Create(p)
		must(t, err)
		must(t, pprof.WriteHeapProfile(f))
		f.Close()
	}

	// Teardown, then no goroutine may be left.
	live.Close()
	<-liveDone
	audit.Close()
	srv.Close()
	tr.CloseIdleConnections()
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > rep.GoroutinesBefore && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond) // polling a counter, not synchronisation
	}
	rep.GoroutinesAfter = runtime.NumGoroutine()
	if rep.GoroutinesAfter > rep.GoroutinesBefore {
		buf := make([]byte, 1<<20)
		t.Errorf("goroutine leak: %d before, %d after\n%s", rep.GoroutinesBefore, rep.GoroutinesAfter, buf[:runtime.Stack(buf, true)])
	}

	if rep.Events["claim"] == 0 || sr.Rounds == 0 || rep.Checks == 0 || rep.Snapshots == 0 {
		t.Errorf("the run did too little to prove anything: %+v", rep)
	}
	b, _ := json.MarshalIndent(rep, "", "  ")
	t.Logf("load report:\n%s", b)
	if p := os.Getenv("STEWARD_LOAD_REPORT"); p != "" {
		must(t, os.WriteFile(p, b, 0o600))
	}
}

func actionOf(a govern.Attempt) string {
	switch {
	case a.Intent != nil:
		return a.Intent.Action
	case a.Outcome != nil:
		return a.Outcome.Action
	}
	return "?"
}

// checkInvariants reads the sources as they are now: at most one active lease per work
// item, at most one readable live lock per item identity.
func checkInvariants(ws govern.Workspace, rep *loadReport) error {
	rep.Checks++
	db, err := openRO(ws.DBPath)
	if err != nil {
		return err
	}
	defer db.Close()
	rows, err := db.Query(`SELECT work_item_id, count(*) FROM leases WHERE status = 'active' GROUP BY work_item_id`)
	if err != nil {
		return err
	}
	active := 0
	var dup []string
	for rows.Next() {
		var id, n int64
		if err := rows.Scan(&id, &n); err != nil {
			rows.Close()
			return err
		}
		active++
		if n > 1 {
			dup = append(dup, fmt.Sprintf("work item %d: %d active leases", id, n))
		}
	}
	rows.Close()
	rep.MaxActiveLeases = max(rep.MaxActiveLeases, active)
	snap, err := locks.LoadDir(ws.LocksDir, locks.LoadOptions{})
	if err != nil {
		return err
	}
	per := map[lockrec.Key]int{}
	for _, e := range snap.Live {
		if e.Unreadable != nil {
			dup = append(dup, "unreadable live lock "+e.Name+": "+string(e.Unreadable.Reason))
			continue
		}
		if e.HasKey {
			per[e.Key]++
			if per[e.Key] == 2 {
				dup = append(dup, fmt.Sprintf("two live locks for %v", e.Key))
			}
		}
	}
	rep.MaxLiveLocks = max(rep.MaxLiveLocks, len(snap.Live))
	if len(dup) > 0 {
		return fmt.Errorf("invariant broken: %s", strings.Join(dup, "; "))
	}
	return nil
}

// memKiB returns this process's resident set and live heap after a full GC that returns
// freed memory to the OS.
func memKiB() (rss, heap int64) {
	debug.FreeOSMemory() // a full GC, then freed memory back to the OS
	// The live heap as the last GC marked it: what allocations made since add is not in it.
	m := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(m)
	if m[0].Value.Kind() == metrics.KindUint64 {
		heap = int64(m[0].Value.Uint64() / 1024)
	}
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, heap
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			rss, _ = strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
		}
	}
	return rss, heap
}
