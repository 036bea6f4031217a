// Package phase holds the measurements of the benchmark harness, each run in a child process
// of its own so that its peak RSS is its own: the workbench's cold start and its live
// session (key presses, a lock-file rename, a DB commit, idle CPU), and the same four
// against their physical limits — the same files read raw, the same rows by a bare SQL
// query, and an empty Bubble Tea program drawing a frame of the same size.
//
// Each sample is a duration in seconds, or for idle CPU the fraction of one core used. The
// workbench runs with the real clock shifted so that it starts at the fleet's Base instant:
// every phase sees heartbeats seconds old, however long after the generation it runs.
package phase

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	"steward/bench/internal/fleet"
)

// Measure names, in the order of the report. Each has a workbench value and a limit value.
const (
	ColdSnapshot = "cold_snapshot" // cold start → first complete snapshot
	ColdFrame    = "cold_frame"    // cold start → first frame that draws it
	LockSnapshot = "lock_snapshot" // one lock-file rename → updated snapshot
	LockFrame    = "lock_frame"    // … → redrawn frame
	DBSnapshot   = "db_snapshot"   // one DB commit → updated snapshot
	DBFrame      = "db_frame"      // … → redrawn frame
	KeyMove      = "key_move"      // j/k → frame
	KeyFilter    = "key_filter"    // one filter keystroke → frame
	KeyView      = "key_view"      // view switch → frame
	IdleCPU      = "idle_cpu"      // fraction of one core while nothing changes
	PeakRSS      = "peak_rss"      // bytes (set by the parent from the child's rusage)
	StatusJSON   = "status_json"   // `steward status --json`, its output written to a file
	StatusRSS    = "status_rss"    // bytes: the peak RSS of the child that ran it
)

// Measures lists every measure in report order.
var Measures = []string{
	ColdSnapshot,
	ColdFrame,
	LockSnapshot,
	LockFrame,
	DBSnapshot,
	DBFrame,
	KeyMove,
	KeyFilter,
	KeyView,
	IdleCPU,
	PeakRSS,
	StatusJSON,
	StatusRSS,
}

// Config is what a child measures and how.
type Config struct {
	Meta          *fleet.Meta
	Width, Height int
	FPS           int           // renderer frame rate; 0 = Bubble Tea's default, as tui.Run
	Cold          int           // cold starts
	Rounds        int           // rounds per change or key measure
	Budget        time.Duration // wall-time cap per change or key measure (at least MinRounds run)
	Idle          time.Duration // idle CPU window (0 skips it)
	ProfileDir    string        // write CPU profiles per phase here ("" none)
}

// timeout bounds every wait for a snapshot or a frame: only a hang should reach it (a frame
// at 50,000 claims on a loaded machine can take seconds, and that is a result, not an error).
const timeout = 2 * time.Minute

// minRounds is the fewest rounds a change or key measure runs, whatever its budget.
const minRounds = 5

// Result is what a child reports on stdout as JSON.
type Result struct {
	Samples map[string][]float64 `json:"samples"`
	HWM     int64                `json:"vm_hwm_bytes"` // /proc/self/status VmHWM at the end
	Notes   []string             `json:"notes,omitempty"`
}

func newResult() *Result { return &Result{Samples: map[string][]float64{}} }

func (r *Result) add(m string, d time.Duration) { r.Samples[m] = append(r.Samples[m], d.Seconds()) }

func (r *Result) note(format string, a ...any) { r.Notes = append(r.Notes, fmt.Sprintf(format, a...)) }

// clock returns the workbench's clock: real time, starting at the fleet's Base.
func (c *Config) clock() func() time.Time {
	start := time.Now()
	base := c.Meta.Base
	return func() time.Time { return base.Add(time.Since(start)) }
}

// rounds runs f until Rounds are done, or the budget is spent after minRounds. Between
// rounds it pauses a random 0–25 ms so that events land at random phases of the renderer's
// frame ticker, as a person's keys and a fleet's writes do.
func (c *Config) rounds(f func(i int) error) error {
	deadline := time.Now().Add(c.Budget)
	for i := 0; i < c.Rounds; i++ {
		if i >= minRounds && c.Budget > 0 && time.Now().After(deadline) {
			return nil
		}
		if err := f(i); err != nil {
			return fmt.Errorf("round %d: %w", i, err)
		}
		time.Sleep(time.Duration(rand.Int64N(int64(25 * time.Millisecond))))
	}
	return nil
}

// minCold is the fewest cold starts a size runs, whatever its budget.
const minCold = 3

// cold times start Cold times (or within the budget, see coldRuns): the time to its first
// snapshot and to its first frame, each run stopped before the next.
func (c *Config) cold(start func() (snap, frame time.Duration, stop func(), err error)) (*Result, error) {
	r := newResult()
	err := c.coldRuns(func(int) error {
		snap, frame, stop, err := start()
		if err != nil {
			return err
		}
		r.add(ColdSnapshot, snap)
		r.add(ColdFrame, frame)
		stop()
		return nil
	})
	if err != nil {
		return nil, err
	}
	r.HWM = hwm()
	return r, nil
}

// coldRuns runs f Cold times, or until the budget is spent after minCold.
func (c *Config) coldRuns(f func(i int) error) error {
	deadline := time.Now().Add(c.Budget)
	for i := 0; i < c.Cold; i++ {
		if i >= minCold && c.Budget > 0 && time.Now().After(deadline) {
			return nil
		}
		runtime.GC()
		if err := f(i); err != nil {
			return fmt.Errorf("cold start %d: %w", i, err)
		}
	}
	return nil
}

// profile starts a CPU profile named name (a no-op without ProfileDir); call the result to stop.
func (c *Config) profile(name string) func() {
	if c.ProfileDir == "" {
		return func() {}
	}
	if err := os.MkdirAll(c.ProfileDir, 0o755); err != nil {
		return func() {}
	}
	f, err := os.Create(filepath.Join(c.ProfileDir, fmt.Sprintf("%s-%d.pprof", name, c.Meta.N)))
	if err != nil {
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return func() {}
	}
	return func() { pprof.StopCPUProfile(); f.Close() }
}

// heapProfile writes a heap profile named name (a no-op without ProfileDir).
func (c *Config) heapProfile(name string) {
	if c.ProfileDir == "" {
		return
	}
	runtime.GC()
	f, err := os.Create(filepath.Join(c.ProfileDir, fmt.Sprintf("%s-%d.pprof", name, c.Meta.N)))
	if err != nil {
		return
	}
	defer f.Close()
	_ = pprof.WriteHeapProfile(f)
}

// cpuTime is this process's user + system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// idle measures the CPU used while nothing changes, as a fraction of one core.
func (c *Config) idle(ctx context.Context, r *Result) {
	if c.Idle <= 0 {
		return
	}
	runtime.GC()
	time.Sleep(500 * time.Millisecond)
	stop := c.profile("idle")
	cpu0, t0 := cpuTime(), time.Now()
	select {
	case <-ctx.Done():
	case <-time.After(c.Idle):
	}
	cpu, wall := cpuTime()-cpu0, time.Since(t0)
	stop()
	r.Samples[IdleCPU] = []float64{float64(cpu) / float64(wall)}
}

// hwm returns VmHWM from /proc/self/status in bytes (0 when unknown).
func hwm() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}
