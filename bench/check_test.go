package main

import (
	"math"
	"strings"
	"testing"

	"steward/bench/internal/phase"
	"steward/bench/internal/stats"
)

func TestRatiosAndRegressions(t *testing.T) {
	t.Parallel()
	run := &runResult{Sizes: []sizeResult{{N: 100,
		Steward: map[string]stats.Summary{phase.LockFrame: {N: 5, Median: 0.040}, phase.KeyMove: {N: 5, Median: 0.012}, phase.IdleCPU: {N: 1, Median: 0.02}},
		Limit:   map[string]stats.Summary{phase.LockFrame: {N: 5, Median: 0.010}, phase.KeyMove: {N: 5, Median: 0.010}, phase.IdleCPU: {N: 1, Median: 0.01}}}}}
	got := ratios(run)
	if got["100"][phase.LockFrame] != 4 || got["100"][phase.KeyMove] != 1.2 {
		t.Fatalf("ratios = %v", got)
	}
	if _, ok := got["100"][phase.IdleCPU]; ok {
		t.Error("idle CPU is checked; it is too noisy over a short window")
	}
	base := &baseline{Ratios: map[string]map[string]float64{"100": {phase.LockFrame: 1.5, phase.KeyMove: 1}}}
	if n := regressed(base, got, 3); n != 0 {
		t.Errorf("4 against 1.5 (< 3×) and 1.2 against 1 counted %d regressions", n)
	}
	base.Ratios["100"][phase.LockFrame] = 1.3
	if n := regressed(base, got, 3); n != 1 {
		t.Errorf("4 against 1.3 (> 3×) counted %d regressions, want 1", n)
	}
	// A second pass keeps the lower ratio: a regression must show twice.
	low := lowest(got, map[string]map[string]float64{"100": {phase.LockFrame: 3.5, phase.KeyMove: 2}})
	if low["100"][phase.LockFrame] != 3.5 || low["100"][phase.KeyMove] != 1.2 {
		t.Errorf("lowest = %v", low)
	}
}

func TestTargets(t *testing.T) {
	t.Parallel()
	run := &runResult{Sizes: []sizeResult{
		{N: 100, Steward: map[string]stats.Summary{phase.LockFrame: {N: 9, Median: 0.040, P99: 0.045}}},
		{N: 10000, Steward: map[string]stats.Summary{phase.LockFrame: {N: 9, Median: 0.100, P99: 0.075}}},
	}}
	byLabel := map[string]target{}
	for _, tg := range targets {
		byLabel[tg.measure+"/"+tg.stat] = tg
	}
	p99 := byLabel[phase.LockFrame+"/p99"]
	v, ok := p99.value(run, false)
	if !ok || v != 0.075 {
		t.Fatalf("p99 at 10,000 = %v, %v", v, ok)
	}
	if got := p99.verdict(v); !strings.Contains(got, "missed") || !strings.Contains(got, "25.0 ms") || !strings.Contains(got, "1.5×") {
		t.Errorf("verdict = %q", got)
	}
	growth := byLabel[phase.LockFrame+"/growth"]
	if g, ok := growth.value(run, false); !ok || math.Abs(g-2.5) > 1e-9 || !strings.Contains(growth.verdict(g), "missed") {
		t.Errorf("growth %v %v: %q", g, ok, growth.verdict(g))
	}
	if _, ok := byLabel[phase.DBFrame+"/p99"].value(run, false); ok {
		t.Error("an unmeasured target has a value")
	}
	run.Sizes[1].Limit = map[string]stats.Summary{phase.LockFrame: {N: 9, Median: 0.02, P99: 0.060}}
	if !strings.Contains(report(run), "its physical limit is 60.0 ms, itself over the target") {
		t.Error("the report does not say that the limit itself misses the target")
	}
	if got := p99.verdict(0.030); got != "met" {
		t.Errorf("verdict under the target = %q", got)
	}
}
