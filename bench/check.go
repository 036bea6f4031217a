package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"

	"steward/bench/internal/phase"
	"steward/bench/internal/stats"
)

// errRegression is returned by check when a ratio regressed past the tolerance.
var errRegression = errors.New("a measure regressed against its baseline ratio to the limit")

// baseline is bench/baseline.json: the median ratio to its limit of every checked measure
// at every checked size.
type baseline struct {
	Note    string                        `json:"note"`
	Command string                        `json:"command"`
	Machine string                        `json:"machine"`
	Load    string                        `json:"load"`
	Ratios  map[string]map[string]float64 `json:"ratios"` // size → measure → ratio
}

// checked are the measures the CI check compares. Idle CPU is left out: a short window on a
// shared machine is mostly noise (the full run reports it).
var checked = []string{phase.ColdSnapshot, phase.ColdFrame, phase.LockSnapshot, phase.LockFrame, phase.DBSnapshot,
	phase.DBFrame, phase.KeyMove, phase.KeyFilter, phase.KeyView, phase.PeakRSS, phase.StatusJSON, phase.StatusRSS}

// ratios returns the median ratio to the limit of every checked measure of a run.
func ratios(run *runResult) map[string]map[string]float64 {
	out := map[string]map[string]float64{}
	for _, s := range run.Sizes {
		m := map[string]float64{}
		for _, k := range checked {
			x, l := s.Steward[k], s.Limit[k]
			if r := stats.Ratio(x.Median, l.Median); x.N > 0 && !math.IsNaN(r) {
				m[k] = math.Round(r*1000) / 1000
			}
		}
		out[strconv.Itoa(s.N)] = m
	}
	return out
}

func writeBaseline(o *options, runs []*runResult) error {
	all := make([]map[string]map[string]float64, len(runs))
	for i, r := range runs {
		all[i] = ratios(r)
	}
	med := map[string]map[string]float64{}
	for size, ms := range all[0] {
		med[size] = map[string]float64{}
		for m := range ms {
			var xs []float64
			for _, a := range all {
				if v, ok := a[size][m]; ok {
					xs = append(xs, v)
				}
			}
			med[size][m] = math.Round(stats.Median(xs)*1000) / 1000
		}
	}
	last := runs[len(runs)-1]
	b := baseline{
		Note: fmt.Sprintf(
			"median ratio of each measure to its physical limit over %d run(s); `go run ./bench -check` fails when a ratio "+
				"exceeds -tolerance (3) times its value here",
			len(runs),
		),
		Command: last.Command,
		Machine: last.Machine,
		Load:    last.LoadStart,
		Ratios:  med,
	}
	data, _ := json.MarshalIndent(b, "", "  ")
	if err := os.WriteFile(o.baseline, append(data, '\n'), 0o644); err != nil {
		return err
	}
	fmt.Printf("bench: wrote %s\n", o.baseline)
	return nil
}

// loadBaseline reads the baseline file.
func loadBaseline(path string) (*baseline, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var base baseline
	if err := json.Unmarshal(data, &base); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &base, nil
}

// regressed counts the ratios above tolerance × their baseline, of the measures judged.
func regressed(base *baseline, now map[string]map[string]float64, tolerance float64, judged func(m string) bool) int {
	bad := 0
	for size, ms := range now {
		for m, r := range ms {
			if want, ok := base.Ratios[size][m]; ok && r > tolerance*want && judged(m) {
				bad++
			}
		}
	}
	return bad
}

func all(string) bool { return true }

// memory are the measures no load moves: a peak RSS is what a session allocated, however
// long it waited for a core.
var memory = map[string]bool{phase.PeakRSS: true, phase.StatusRSS: true}

// overloaded reports whether a run's machine was overloaded at some point: a 1-minute load
// average above factor × its cores at the start or end of the run or of a size. A time
// measured then is mostly the wait for a core — a path of more goroutine hops and more CPU
// than its limit's waits more — so its ratio says nothing about the code.
func overloaded(run *runResult, cores int, factor float64) (string, bool) {
	loads := []string{run.LoadStart, run.LoadEnd}
	for _, s := range run.Sizes {
		loads = append(loads, s.Load[0], s.Load[1])
	}
	worst := 0.0
	for _, l := range loads {
		if f := strings.Fields(l); len(f) > 0 {
			if v, err := strconv.ParseFloat(f[0], 64); err == nil && v > worst {
				worst = v
			}
		}
	}
	return fmt.Sprintf("%.1f on %d cores", worst, cores), factor > 0 && worst > factor*float64(cores)
}

// lowest keeps, per measure, the lower ratio of two passes: a regression must show in both.
func lowest(a, b map[string]map[string]float64) map[string]map[string]float64 {
	for size, ms := range a {
		for m, r := range ms {
			if x, ok := b[size][m]; ok && x < r {
				ms[m] = x
			}
		}
	}
	return a
}

// check compares a run's ratios with the baseline's and prints the comparison. A ratio above
// the tolerance on the first pass is measured once more (the shared machine's noise is not
// a regression); it fails only when both passes exceed it. On an overloaded machine
// (-overload) only the memory measures are judged: a time ratio over the tolerance is
// printed as not judged, with the load, and does not fail the check.
func check(ctx context.Context, o *options, run *runResult) error {
	base, err := loadBaseline(o.baseline)
	if err != nil {
		return err
	}
	now := ratios(run)
	passes := 1
	load, busy := overloaded(run, runtime.NumCPU(), o.overload)
	if regressed(base, now, o.tolerance, all) > 0 {
		fmt.Fprintln(os.Stderr, "bench check: a ratio is over the tolerance; measuring once more")
		again, err := o.measure(ctx)
		if err != nil {
			return err
		}
		now, passes = lowest(now, ratios(again)), 2
		l2, b2 := overloaded(again, runtime.NumCPU(), o.overload)
		if b2 && !busy {
			load = l2
		}
		busy = busy || b2
	}
	judged := func(m string) bool { return !busy || memory[m] }
	var lines []string
	for size, ms := range now {
		for m, r := range ms {
			want, ok := base.Ratios[size][m]
			verdict := "ok"
			switch {
			case !ok:
				verdict = "no baseline"
			case r > o.tolerance*want && !judged(m):
				verdict = fmt.Sprintf(
					"over %.1f× the baseline, NOT JUDGED: the machine was overloaded (load %s)",
					o.tolerance,
					load,
				)
			case r > o.tolerance*want:
				verdict = fmt.Sprintf("REGRESSED (> %.1f× the baseline)", o.tolerance)
			}
			lines = append(
				lines,
				fmt.Sprintf("%6s  %-28s ratio %7.2f  baseline %7.2f  %s", size, labels[m], r, want, verdict),
			)
		}
	}
	sort.Strings(lines)
	fmt.Printf(
		"bench check: ratio to the physical limit (median) against %s, tolerance %.1f×; %d pass(es); load %s\n%s\n",
		o.baseline,
		o.tolerance,
		passes,
		run.LoadStart,
		strings.Join(lines, "\n"),
	)
	if busy {
		fmt.Printf(
			"bench check: the 1-minute load reached %s (over -overload %.0f× the cores): only peak RSS was judged; run the "+
				"check again on a quieter machine to judge the times\n",
			load,
			o.overload,
		)
	}
	if regressed(base, now, o.tolerance, judged) > 0 {
		return errRegression
	}
	return nil
}
