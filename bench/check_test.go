package main

import (
	"fmt"
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
	if n := regressed(base, got, 3, all); n != 0 {
		t.Errorf("4 against 1.5 (< 3×) and 1.2 against 1 counted %d regressions", n)
	}
	base.Ratios["100"][phase.LockFrame] = 1.3
	if n := regressed(base, got, 3, all); n != 1 {
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
		byLabel[fmt.Sprintf("%s/%s/%d", tg.measure, tg.stat, tg.n)] = tg
	}
	p99 := byLabel[phase.LockFrame+"/p99/10000"]
	v, ok := p99.value(run, false)
	if !ok || v != 0.075 {
		t.Fatalf("p99 at 10,000 = %v, %v", v, ok)
	}
	if got := p99.verdict(v); !strings.Contains(got, "missed") || !strings.Contains(got, "25.0 ms") || !strings.Contains(got, "1.5×") {
		t.Errorf("verdict = %q", got)
	}
	growth := byLabel[phase.LockFrame+"/growth/10000"]
	if g, ok := growth.value(run, false); !ok || math.Abs(g-2.5) > 1e-9 || !strings.Contains(growth.verdict(g), "missed") {
		t.Errorf("growth %v %v: %q", g, ok, growth.verdict(g))
	}
	if _, ok := byLabel[phase.DBFrame+"/p99/10000"].value(run, false); ok {
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

func TestRatioAndExponentTargets(t *testing.T) {
	t.Parallel()
	byLabel := map[string]target{}
	for _, tg := range targets {
		byLabel[fmt.Sprintf("%s/%s/%d", tg.measure, tg.stat, tg.n)] = tg
	}
	run := &runResult{Sizes: []sizeResult{
		{N: 1000, Steward: map[string]stats.Summary{phase.ColdFrame: {N: 5, Median: 0.1}}},
		{N: 10000, Steward: map[string]stats.Summary{phase.ColdFrame: {N: 5, Median: 1}, phase.IdleCPU: {N: 1, Median: 0.05}},
			Limit: map[string]stats.Summary{phase.IdleCPU: {N: 1, Median: 0.01}}},
		{N: 50000, Steward: map[string]stats.Summary{phase.ColdFrame: {N: 5, Median: 5}}},
		{N: 100000, Steward: map[string]stats.Summary{phase.ColdFrame: {N: 5, Median: 1000}, phase.StatusJSON: {N: 3, Median: 2}},
			Limit: map[string]stats.Summary{phase.StatusJSON: {N: 3, Median: 1}}},
	}}
	idle := byLabel[phase.IdleCPU+"/ratio/10000"]
	if v, ok := idle.value(run, false); !ok || math.Abs(v-5) > 1e-9 || !strings.Contains(idle.verdict(v), "missed") {
		t.Errorf("idle 5%% against an empty program's 1%%: %v %v %q", v, ok, idle.verdict(v))
	}
	if _, ok := idle.value(run, true); ok {
		t.Error("a ratio target has a value for the limit itself")
	}
	st := byLabel[phase.StatusJSON+"/ratio/100000"]
	if v, ok := st.value(run, false); !ok || v != 2 || st.verdict(v) != "met" {
		t.Errorf("status at 2× its raw read: %v %v %q", v, ok, st.verdict(v))
	}
	// Linear from 1,000 to 50,000; the 100,000 point (1,000 s) is outside the fitted range.
	k := byLabel[phase.ColdFrame+"/exponent/0"]
	if v, ok := k.value(run, false); !ok || math.Abs(v-1) > 1e-9 || k.verdict(v) != "met" {
		t.Errorf("exponent over 1,000…50,000 = %v %v %q", v, ok, k.verdict(v))
	}
	run.Sizes[2].Steward[phase.ColdFrame] = stats.Summary{N: 5, Median: 50}
	if v, _ := k.value(run, false); v <= 1 || !strings.Contains(k.verdict(v), "missed") {
		t.Errorf("a super-linear cold start is %v: %q", v, k.verdict(v))
	}
	if _, ok := byLabel[phase.PeakRSS+"/median/50000"].value(run, false); ok {
		t.Error("an unmeasured size has a value")
	}
}

func TestOverloadedJudgesOnlyMemory(t *testing.T) {
	t.Parallel()
	run := &runResult{LoadStart: "1.0 1.0 1.0", LoadEnd: "2.0 1.0 1.0", Sizes: []sizeResult{{N: 100, Load: [2]string{"3.5 2 2", "9.1 3 3"}}}}
	if l, busy := overloaded(run, 2, 4); !busy || l != "9.1 on 2 cores" {
		t.Errorf("load 9.1 on 2 cores at factor 4: %q %v", l, busy)
	}
	if _, busy := overloaded(run, 4, 4); busy {
		t.Error("load 9.1 on 4 cores is overloaded at factor 4")
	}
	if _, busy := overloaded(run, 2, 0); busy {
		t.Error("-overload 0 still skips the times")
	}
	run.Sizes[0].Load = [2]string{"unknown", ""}
	if _, busy := overloaded(run, 2, 4); busy {
		t.Error("an unknown load is overloaded")
	}
	base := &baseline{Ratios: map[string]map[string]float64{"100": {phase.LockFrame: 1, phase.PeakRSS: 1}}}
	now := map[string]map[string]float64{"100": {phase.LockFrame: 9, phase.PeakRSS: 9}}
	if n := regressed(base, now, 3, func(m string) bool { return memory[m] }); n != 1 {
		t.Errorf("under load, %d regressions judged; want the peak RSS alone", n)
	}
}
