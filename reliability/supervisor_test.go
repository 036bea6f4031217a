package reliability_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime/pprof"
	"sort"
	"strconv"
	"sync"
	"time"

	"steward/govern"
	"steward/govern/actionid"
	"steward/leases/leaserec"
	"steward/model"
	"steward/model/live"
	"steward/sim"
)

// childWorkspace is how the parent hands its workspace to a child process.
type childWorkspace struct {
	LocksDir, DBPath, RepoRoot string
	Speed                      float64
	Org, Repo                  string
	Items                      int
}

// supervisorReport is the second steward process's tally, printed as its last line.
type supervisorReport struct {
	Rounds  int            `json:"rounds"`
	Applied map[string]int `json:"applied"` // "action result" → count
	// Unknown holds what the core said of the first outcomes it could not settle.
	Unknown []string `json:"unknown_outcomes,omitempty"`
	// Memory samples of this process: seconds since it started, resident set and live
	// heap (as of the last GC mark) in KiB.
	MemAt   []float64 `json:"mem_at_s"`
	RSSKiB  []int64   `json:"rss_kib"`
	HeapKiB []int64   `json:"heap_kib"`
	// What of the resident set the Go runtime holds (memParts), in total and by class; the
	// rest is the binary and SQLite's C allocator.
	GoKiB   []int64            `json:"go_runtime_kib"`
	GoParts []map[string]int64 `json:"go_runtime_parts_kib"`
	// The leak check, as live heaps after a full GC, once the fleet has stopped: with the
	// long-running model (Long), with a model started fresh on the same workspace beside it
	// (Both), and with the long-running one closed and dropped (FreshOnly). Both-FreshOnly
	// is what the run's model holds, Both-Long what a fresh one needs for the same state —
	// each measured as what one model adds, so nothing else the process grew over the run
	// (the core's handles, this report) is counted. State is claims, orphans, sessions.
	HeapLongKiB      int64  `json:"heap_long_kib"`
	HeapBothKiB      int64  `json:"heap_both_kib"`
	HeapFreshOnlyKiB int64  `json:"heap_fresh_only_kib"`
	StateLong        [3]int `json:"state_long"`
	StateFresh       [3]int `json:"state_fresh"`
	// Drift lists what the long-running model shows and a fresh one does not, or the
	// reverse (claims, orphans, sessions by identity): incremental updates must add up to a
	// full read.
	Drift []string `json:"drift"`
	// What each model holds, table by table (model.Stats): where a long-running model holds
	// more than a fresh one, this says which table.
	StatsLong  model.Stats `json:"stats_long"`
	StatsFresh model.Stats `json:"stats_fresh"`
}

// drift compares two snapshots of one state by the identity of every claim, orphan and
// session; it returns the differences ("+" only in a, "-" only in b).
func drift(a, b *model.Snapshot) []string {
	keys := func(s *model.Snapshot) map[string]int {
		m := map[string]int{}
		for _, c := range s.Claims {
			m[fmt.Sprintf("claim %v %s %s %s %s %s", c.Item, c.LeaseID, c.LockFile, c.LeaseStatus, c.Freshness, c.OwnerLiveness)]++
		}
		for _, o := range s.Orphans {
			m[fmt.Sprintf("orphan %s %v %s %s", o.Kind, o.Item, o.LeaseID, o.LockFile)]++
		}
		for _, x := range s.Sessions {
			m[fmt.Sprintf("session %s %s %s", x.SessionID, x.Status, x.Liveness)]++
		}
		return m
	}
	ka, kb := keys(a), keys(b)
	var out []string
	for k, n := range ka {
		for ; n > kb[k]; n-- {
			out = append(out, "+ "+k)
		}
	}
	for k, n := range kb {
		for ; n > ka[k]; n-- {
			out = append(out, "- "+k)
		}
	}
	sort.Strings(out)
	return out
}

// supervise is a second steward process on the same workspace and audit log: for the
// given wall time it watches the workspace with a live model as the workbench does (and
// every tenth round reads it once more as `steward status` does), applies every orphan's
// sanctioned action the governed core allows (reclaim, abandon, retire, the expire sweep),
// and claims and releases an item itself as `steward claim` would — all through its own
// governed core, racing the fleet's. It samples its own memory: this process is steward.
func supervise(wsJSON, auditPath, dur string) error {
	var cw childWorkspace
	if err := json.Unmarshal([]byte(wsJSON), &cw); err != nil {
		return err
	}
	d, err := time.ParseDuration(dur)
	if err != nil {
		return err
	}
	log, err := govern.OpenAudit(auditPath, nil)
	if err != nil {
		return err
	}
	defer log.Close()
	ws := govern.Workspace{LocksDir: cw.LocksDir, DBPath: cw.DBPath, RepoRoot: cw.RepoRoot, Env: sim.Lookup(sim.PolicyEnv(cw.Speed), nil)}
	core := govern.New(ws, log, govern.Options{Actor: govern.LocalActor(govern.RoleOperator, "second-steward")})
	defer core.Close()
	ctx := context.Background()
	rep := supervisorReport{Applied: map[string]int{}}
	rng := rand.New(rand.NewPCG(uint64(os.Getpid()), 1))
	apply := func(req govern.Request) {
		pv, err := core.Preview(ctx, req)
		if err != nil || !pv.Allowed {
			return
		}
		out := core.Apply(ctx, pv, pv.ConfirmPhrase)
		rep.Applied[req.Action+" "+string(out.Result)]++
		if out.Result == govern.ResultUnknown && len(rep.Unknown) < 10 {
			rep.Unknown = append(rep.Unknown, req.Action+": "+out.Message)
		}
	}
	mws := live.Workspace{LocksDir: cw.LocksDir, DBPath: cw.DBPath, RepoRoot: cw.RepoRoot}
	probe := live.NewProbe(cw.RepoRoot)
	cfg := model.Config{Policies: leaserec.LoadPolicies(ws.Env)}
	lm := live.New(mws, live.Options{Config: cfg, Resync: 5 * time.Second})
	if err := lm.Start(ctx); err != nil {
		return err
	}
	defer func() { // lm is dropped before the end to measure what it held
		if lm != nil {
			lm.Close()
		}
	}()
	go func() { // the workbench's consumer: take every snapshot as it comes
		for range lm.Snapshots() {
		}
	}()
	start := time.Now()
	deadline := start.Add(d)
	// Memory is sampled on its own ticker, so a round slowed by a loaded machine does not
	// thin the samples: 80 over the run, at least ten of them after warm-up.
	var memMu sync.Mutex
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		var profiled []time.Duration
		tick := time.NewTicker(min(d/80, 5*time.Second))
		defer tick.Stop()
		for now := range tick.C {
			if now.After(deadline) {
				return
			}
			r, h := memKiB()
			g, parts := memParts()
			if p := os.Getenv("STEWARD_LOAD_SECOND_HEAPPROFILE"); p != "" && len(profiled) < 2 {
				// Two heap profiles of this process, a third of the way in and at the end, for
				// `go tool pprof -base`.
				if at := time.Since(start); (len(profiled) == 0 && at >= d/3) || (len(profiled) == 1 && now.Add(min(d/80, 5*time.Second)).After(deadline)) {
					writeHeapProfile(p + "." + strconv.Itoa(len(profiled)))
					profiled = append(profiled, at)
				}
			}
			memMu.Lock()
			rep.MemAt, rep.RSSKiB, rep.HeapKiB = append(rep.MemAt, time.Since(start).Seconds()), append(rep.RSSKiB, r), append(rep.HeapKiB, h)
			rep.GoKiB, rep.GoParts = append(rep.GoKiB, g), append(rep.GoParts, parts)
			memMu.Unlock()
		}
	}()
	for time.Now().Before(deadline) {
		rep.Rounds++
		now := time.Now()
		s := lm.Current()
		if rep.Rounds%10 == 0 {
			s = model.Build(live.Load(ctx, mws, probe, now), cfg, now)
		}
		for _, o := range s.Orphans {
			if o.Action != nil {
				apply(govern.Request{Action: o.Action.ID, Target: govern.Target{LeaseID: o.Action.Target.LeaseID, LockFile: o.Action.Target.LockFile}})
			}
		}
		if rep.Rounds%5 == 0 {
			apply(govern.Request{Action: actionid.ExpireSweep})
		}
		// Act as a worker on one item: claim, then release what was claimed.
		n := int64(1 + rng.IntN(cw.Items))
		session := "second-steward-" + strconv.Itoa(rep.Rounds%8) // a few sessions, reused, as a real one would
		_, out, err := core.Run(ctx, govern.Request{Action: actionid.Claim,
			Target: govern.Target{Session: session, Item: &govern.Item{Org: cw.Org, Repo: cw.Repo, Kind: "issue", Number: n}},
			Params: govern.ClaimParams{PID: strconv.Itoa(os.Getpid()), Username: "second-steward"}}, "")
		if err == nil {
			rep.Applied[actionid.Claim+" "+string(out.Result)]++
			if out.Result == govern.ResultSucceeded {
				apply(govern.Request{Action: actionid.Release, Target: govern.Target{LeaseID: out.Detail["lease_id"], Session: session}})
			}
		}
		time.Sleep(100 * time.Millisecond) // the supervisor's pace, not synchronisation
	}
	<-sampled
	memMu.Lock()
	defer memMu.Unlock()
	// A steward that ran for the whole load against one started fresh on what it left —
	// once the fleet has stopped (the parent says so on stdin), so both read one state.
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		return fmt.Errorf("waiting for the fleet to stop: %w", err)
	}
	lm.Refresh()
	_, rep.HeapLongKiB = memKiB()
	fresh := live.New(mws, live.Options{Config: cfg, Resync: time.Hour})
	if err := fresh.Start(ctx); err != nil {
		return err
	}
	_, rep.HeapBothKiB = memKiB()
	size := func(s *model.Snapshot) [3]int { return [3]int{len(s.Claims), len(s.Orphans), len(s.Sessions)} }
	rep.StateLong, rep.StateFresh = size(lm.Current()), size(fresh.Current())
	rep.Drift = drift(lm.Current(), fresh.Current())
	rep.StatsLong, rep.StatsFresh = lm.Stats(), fresh.Stats()
	lm.Close()
	lm = nil
	_, rep.HeapFreshOnlyKiB = memKiB()
	fresh.Close()
	b, _ := json.Marshal(rep)
	fmt.Println(string(b))
	return nil
}

func writeHeapProfile(path string) {
	f, err := os.Create(path)
	if err != nil {
		return
	}
	defer f.Close()
	_ = pprof.WriteHeapProfile(f)
}
