package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"steward/bench/internal/fleet"
	"steward/bench/internal/phase"
	"steward/bench/internal/stats"
)

// sizeResult is every measure at one fleet size: the workbench's and its limit's.
type sizeResult struct {
	N        int                      `json:"n"`
	Generate float64                  `json:"generate_s"`
	Load     [2]string                `json:"load"` // 1, 5, 15 min load averages before and after
	Steward  map[string]stats.Summary `json:"steward"`
	Limit    map[string]stats.Summary `json:"limit"`
	Notes    []string                 `json:"notes,omitempty"`
	// StatusBytes is the size of the output of `steward status --json`.
	StatusBytes int64 `json:"status_bytes,omitempty"`
}

// runResult is one run of the harness.
type runResult struct {
	Command   string       `json:"command"`
	Started   time.Time    `json:"started"`
	Wall      float64      `json:"wall_s"`
	Machine   string       `json:"machine"`
	Code      string       `json:"code"`
	LoadStart string       `json:"load_start"`
	LoadEnd   string       `json:"load_end"`
	Terminal  string       `json:"terminal"`
	Sizes     []sizeResult `json:"sizes"`
}

func runParent(ctx context.Context, o *options) error {
	if o.write && !o.check {
		return fmt.Errorf("-write-baseline needs -check")
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	var runs []*runResult
	for i := 0; i < max(o.repeat, 1); i++ {
		run, err := o.measure(ctx)
		if err != nil {
			return err
		}
		runs = append(runs, run)
		if !o.write {
			break
		}
	}
	run := runs[len(runs)-1]
	b, _ := json.MarshalIndent(run, "", "  ")
	if err := os.WriteFile(filepath.Join(o.out, "results.json"), b, 0o644); err != nil {
		return err
	}
	rep := report(run)
	if err := os.WriteFile(filepath.Join(o.out, "report.md"), []byte(rep), 0o644); err != nil {
		return err
	}
	switch {
	case o.write:
		return writeBaseline(o, runs)
	case o.check:
		return check(ctx, o, run)
	}
	fmt.Print(rep)
	return nil
}

// rerender prints the report of a saved run.
func rerender(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var run runResult
	if err := json.Unmarshal(b, &run); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	fmt.Print(report(&run))
	return nil
}

// measure generates each size's workspace and runs the four children on it.
func (o *options) measure(ctx context.Context) (*runResult, error) {
	t0 := time.Now()
	run := &runResult{
		Command:   strings.TrimSpace("go run ./bench " + strings.Join(os.Args[1:], " ")),
		Started:   t0.UTC().Truncate(time.Second),
		Machine:   machine(),
		Code:      code(),
		LoadStart: loadavg(),
		Terminal:  fmt.Sprintf("%dx%d", o.width, o.height),
	}
	if o.fps > 0 {
		run.Terminal += fmt.Sprintf(" at %d fps", o.fps)
	} else {
		run.Terminal += " at 60 fps (Bubble Tea's default)"
	}
	root := o.work
	if root == "" {
		root = os.TempDir()
	}
	for _, n := range o.sizes {
		dir, err := os.MkdirTemp(root, fmt.Sprintf("steward-bench-%d-", n))
		if err != nil {
			return nil, err
		}
		sr, err := o.measureSize(ctx, dir, n)
		if !o.keep {
			os.RemoveAll(dir)
		}
		if err != nil {
			return nil, err
		}
		run.Sizes = append(run.Sizes, *sr)
	}
	run.LoadEnd = loadavg()
	run.Wall = time.Since(t0).Seconds()
	return run, nil
}

func (o *options) measureSize(ctx context.Context, dir string, n int) (*sizeResult, error) {
	fmt.Fprintf(os.Stderr, "bench: %d claims: generating (load %s)\n", n, loadavg())
	load := loadavg()
	t0 := time.Now()
	ws := filepath.Join(dir, "ws")
	if _, err := fleet.Generate(ws, n); err != nil {
		return nil, err
	}
	sr := &sizeResult{
		N:        n,
		Generate: time.Since(t0).Seconds(),
		Steward:  map[string]stats.Summary{},
		Limit:    map[string]stats.Summary{},
		Load:     [2]string{load, ""},
	}
	kinds := []string{"steward-status", "limit-status"}
	if n <= o.workbenchMax {
		kinds = append([]string{"steward-cold", "limit-cold", "steward-live", "limit-live"}, kinds...)
	} else {
		sr.Notes = append(sr.Notes, fmt.Sprintf("the workbench is not measured above %d claims (-workbench-max): `steward "+
			"status --json` only", o.workbenchMax))
	}
	for _, kind := range kinds {
		fmt.Fprintf(os.Stderr, "bench: %d claims: %s\n", n, kind)
		cr, err := o.spawn(ctx, kind, ws)
		if err != nil {
			return nil, err
		}
		dst := sr.Steward
		if strings.HasPrefix(kind, "limit") {
			dst = sr.Limit
		}
		for m, xs := range cr.Samples {
			dst[m] = stats.Summarize(xs)
		}
		switch {
		case strings.HasSuffix(kind, "live"):
			dst[phase.PeakRSS] = stats.Summarize([]float64{float64(cr.MaxRSS)})
		case strings.HasSuffix(kind, "status"):
			dst[phase.StatusRSS] = stats.Summarize([]float64{float64(cr.MaxRSS)})
		}
		if kind == "steward-status" {
			// What status wrote must be the whole fleet: a fast answer that lost claims is no answer.
			got, size, err := phase.CountStatusClaims(ws)
			if err != nil {
				return nil, err
			}
			if got != n {
				return nil, fmt.Errorf("steward status --json at %d claims listed %d claims", n, got)
			}
			sr.StatusBytes = size
		}
		for _, s := range cr.Notes {
			sr.Notes = append(sr.Notes, kind+": "+s)
		}
	}
	sr.Load[1] = loadavg()
	return sr, nil
}

// loadavg returns the 1, 5 and 15 minute load averages.
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// code names the commit measured, and the steward packages with uncommitted changes.
func code() string {
	head, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "unknown (not a git checkout)"
	}
	out := "commit " + strings.TrimSpace(string(head))
	st, err := exec.Command("git", "status", "--porcelain", "--", "locks", "leases", "model", "tui", "govern", "termsafe").
		Output()
	if err == nil && len(strings.TrimSpace(string(st))) > 0 {
		dirs := map[string]bool{}
		for _, l := range strings.Split(strings.TrimSpace(string(st)), "\n") {
			if f := strings.Fields(l); len(f) > 1 {
				dirs[strings.SplitN(f[len(f)-1], "/", 2)[0]] = true
			}
		}
		var ds []string
		for d := range dirs {
			ds = append(ds, d+"/")
		}
		sort.Strings(ds)
		out += " with uncommitted changes in " + strings.Join(ds, ", ")
	}
	return out
}

// machine names the CPU, its count and the Go version.
func machine() string {
	cpu := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "model name"); ok {
				cpu = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
				break
			}
		}
	}
	return fmt.Sprintf("%s, %d cores, %s %s/%s", cpu, runtime.NumCPU(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
