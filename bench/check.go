package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
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
	phase.DBFrame, phase.KeyMove, phase.KeyFilter, phase.KeyView, phase.PeakRSS}

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
	b := baseline{Note: fmt.Sprintf("median ratio of each measure to its physical limit over %d run(s); `go run ./bench -check` fails when a ratio exceeds -tolerance (3) times its value here", len(runs)),
		Command: last.Command, Machine: last.Machine, Load: last.LoadStart, Ratios: med}
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

// regressed counts the ratios above tolerance × their baseline.
func regressed(base *baseline, now map[string]map[string]float64, tolerance float64) int {
	bad := 0
	for size, ms := range now {
		for m, r := range ms {
			if want, ok := base.Ratios[size][m]; ok && r > tolerance*want {
				bad++
			}
		}
	}
	return bad
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
// a regression); it fails only when both passes exceed it.
func check(ctx context.Context, o *options, run *runResult) error {
	base, err := loadBaseline(o.baseline)
	if err != nil {
		return err
	}
	now := ratios(run)
	passes := 1
	if regressed(base, now, o.tolerance) > 0 {
		fmt.Fprintln(os.Stderr, "bench check: a ratio is over the tolerance; measuring once more")
		again, err := o.measure(ctx)
		if err != nil {
			return err
		}
		now, passes = lowest(now, ratios(again)), 2
	}
	var lines []string
	for size, ms := range now {
		for m, r := range ms {
			want, ok := base.Ratios[size][m]
			verdict := "ok"
			switch {
			case !ok:
				verdict = "no baseline"
			case r > o.tolerance*want:
				verdict = fmt.Sprintf("REGRESSED (> %.1f× the baseline)", o.tolerance)
			}
			lines = append(lines, fmt.Sprintf("%6s  %-28s ratio %7.2f  baseline %7.2f  %s", size, labels[m], r, want, verdict))
		}
	}
	sort.Strings(lines)
	fmt.Printf("bench check: ratio to the physical limit (median) against %s, tolerance %.1f×; %d pass(es); load %s\n%s\n",
		o.baseline, o.tolerance, passes, run.LoadStart, strings.Join(lines, "\n"))
	if regressed(base, now, o.tolerance) > 0 {
		return errRegression
	}
	return nil
}
