package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"steward/bench/internal/fleet"
	"steward/bench/internal/phase"
)

// options are the harness's flags.
type options struct {
	sizes         []int
	cold, rounds  int
	budget, idle  time.Duration
	width, height int
	fps           int
	work, out     string
	pprof, keep   bool
	check, write  bool
	baseline      string
	tolerance     float64
	repeat        int
	child, ws     string
	rerender      string
	workbenchMax  int
	overload      float64
}

func parseFlags(args []string) (*options, error) {
	o := &options{}
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	sizes := fs.String("sizes", "100,1000,10000,50000,100000", "fleet sizes (claims), comma-separated")
	fs.IntVar(
		&o.workbenchMax,
		"workbench-max",
		50000,
		"largest size at which the workbench is measured; larger sizes measure `steward status --json` only",
	)
	fs.IntVar(&o.cold, "cold", 10, "cold starts per size")
	fs.IntVar(&o.rounds, "rounds", 100, "rounds per change and key measure")
	fs.DurationVar(
		&o.budget,
		"budget",
		40*time.Second,
		"wall-time cap per measure (at least 5 rounds, 3 cold starts run)",
	)
	fs.DurationVar(&o.idle, "idle", 30*time.Second, "idle CPU window (0 skips it)")
	fs.IntVar(&o.width, "width", 160, "terminal width")
	fs.IntVar(&o.height, "height", 48, "terminal height")
	fs.IntVar(&o.fps, "fps", 0, "renderer frame rate (0: Bubble Tea's default, 60, as the workbench runs)")
	fs.StringVar(&o.work, "work", "", "directory for the generated workspaces (default: the system temp directory)")
	fs.StringVar(&o.out, "out", "bench/out", "directory for results.json, report.md and profiles (git-ignored)")
	fs.BoolVar(&o.pprof, "pprof", false, "write CPU profiles per phase and a heap profile under -out/pprof")
	fs.BoolVar(&o.keep, "keep", false, "keep the generated workspaces")
	fs.BoolVar(
		&o.check,
		"check",
		false,
		"CI mode: small sizes and rounds; fail when a ratio to its limit exceeds -tolerance × the baseline",
	)
	fs.BoolVar(&o.write, "write-baseline", false, "with -check: write the ratios to -baseline instead of comparing")
	fs.StringVar(&o.baseline, "baseline", "bench/baseline.json", "baseline file of ratios to the limit")
	fs.Float64Var(
		&o.tolerance,
		"tolerance",
		3,
		"allowed regression of a ratio to its limit, as a factor of the baseline",
	)
	fs.Float64Var(
		&o.overload,
		"overload",
		4,
		"with -check: a 1-minute load average above this × the cores makes the time ratios not judged (0: always judged)",
	)
	fs.IntVar(&o.repeat, "repeat", 1, "with -write-baseline: runs whose median ratios are recorded")
	fs.StringVar(&o.rerender, "report", "", "print the report of a saved results.json instead of measuring")
	fs.StringVar(
		&o.child,
		"child",
		"",
		"internal: run one measurement child (steward-cold, steward-live, limit-cold, limit-live)",
	)
	fs.StringVar(&o.ws, "ws", "", "internal: the child's workspace")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if o.check {
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		def := func(name string, apply func()) {
			if !set[name] {
				apply()
			}
		}
		def("sizes", func() { *sizes = "100,1000" })
		def("cold", func() { o.cold = 5 })
		def("rounds", func() { o.rounds = 30 })
		def("budget", func() { o.budget = 3 * time.Second })
		def("idle", func() { o.idle = 0 })
	}
	for _, s := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("bad size %q", s)
		}
		o.sizes = append(o.sizes, n)
	}
	return o, nil
}

func main() {
	o, err := parseFlags(os.Args[1:])
	if err != nil {
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	switch {
	case o.rerender != "":
		err = rerender(o.rerender)
	case o.child != "":
		err = runChild(ctx, o)
	default:
		err = runParent(ctx, o)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		if err == errRegression {
			os.Exit(1)
		}
		os.Exit(2)
	}
}

func (o *options) config(m *fleet.Meta) *phase.Config {
	c := &phase.Config{Meta: m, Width: o.width, Height: o.height, FPS: o.fps, Cold: o.cold, Rounds: o.rounds,
		Budget: o.budget, Idle: o.idle}
	if o.pprof {
		c.ProfileDir = filepath.Join(o.out, "pprof")
	}
	return c
}

// runChild runs one measurement and prints its result as JSON.
func runChild(ctx context.Context, o *options) error {
	m, err := fleet.Load(o.ws)
	if err != nil {
		return err
	}
	run := map[string]func(context.Context, *phase.Config) (*phase.Result, error){
		"steward-cold": phase.StewardCold, "steward-live": phase.StewardLive,
		"limit-cold": phase.LimitCold, "limit-live": phase.LimitLive,
		"steward-status": phase.StewardStatus, "limit-status": phase.LimitStatus,
	}[o.child]
	if run == nil {
		return fmt.Errorf("unknown child %q", o.child)
	}
	c := o.config(m)
	if strings.HasPrefix(o.child, "limit") {
		c.ProfileDir = "" // the limits are not what the profiles are for
	}
	r, err := run(ctx, c)
	if err != nil {
		return fmt.Errorf("%s at %d claims: %w", o.child, m.N, err)
	}
	return json.NewEncoder(os.Stdout).Encode(r)
}

// childRun is one child's result and its peak RSS.
type childRun struct {
	*phase.Result
	MaxRSS int64 // bytes, from the child's rusage
	Wall   time.Duration
}

// spawn runs a measurement child on workspace dir.
func (o *options) spawn(ctx context.Context, kind, dir string) (*childRun, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	args := []string{"-child", kind, "-ws", dir, "-cold", fmt.Sprint(o.cold), "-rounds", fmt.Sprint(o.rounds),
		"-budget", o.budget.String(), "-idle", o.idle.String(),
		"-width", fmt.Sprint(o.width), "-height", fmt.Sprint(o.height),
		"-fps", fmt.Sprint(o.fps), "-out", o.out}
	if o.pprof {
		args = append(args, "-pprof")
	}
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Stderr = os.Stderr
	t0 := time.Now()
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("child %s: %w", kind, err)
	}
	var r phase.Result
	if err := json.Unmarshal(out, &r); err != nil {
		return nil, fmt.Errorf("child %s: %w", kind, err)
	}
	cr := &childRun{Result: &r, Wall: time.Since(t0)}
	fmt.Fprintf(os.Stderr, "bench: %s done in %s\n", kind, cr.Wall.Round(time.Second))
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		cr.MaxRSS = ru.Maxrss << 10 // kilobytes on Linux
	}
	return cr, nil
}
