package main

import (
	"fmt"
	"math"
	"strings"

	"steward/bench/internal/phase"
	"steward/bench/internal/stats"
)

// labels name the measures in the report.
var labels = map[string]string{
	phase.ColdSnapshot: "cold start → first snapshot",
	phase.ColdFrame:    "cold start → first frame",
	phase.LockSnapshot: "lock rename → snapshot",
	phase.LockFrame:    "lock rename → frame",
	phase.DBSnapshot:   "DB commit → snapshot",
	phase.DBFrame:      "DB commit → frame",
	phase.KeyMove:      "key j/k → frame",
	phase.KeyFilter:    "filter keystroke → frame",
	phase.KeyView:      "view switch → frame",
	phase.IdleCPU:      "idle CPU",
	phase.PeakRSS:      "peak RSS",
}

// format renders a value of measure m: milliseconds, % of one core or MB (10⁶ bytes).
func format(m string, v float64) string {
	switch {
	case math.IsNaN(v):
		return "—"
	case m == phase.IdleCPU:
		return fmt.Sprintf("%.2f%%", 100*v)
	case m == phase.PeakRSS:
		return fmt.Sprintf("%.0f MB", v/1e6)
	case v < 0.01:
		return fmt.Sprintf("%.2f ms", 1e3*v)
	case v < 1:
		return fmt.Sprintf("%.1f ms", 1e3*v)
	}
	return fmt.Sprintf("%.2f s", v)
}

func ratio(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "—"
	}
	if x >= 100 {
		return fmt.Sprintf("%.0f×", x)
	}
	return fmt.Sprintf("%.1f×", x)
}

// series returns a measure's statistic over the sizes, for the exponents.
func series(run *runResult, m string, limit bool, get func(stats.Summary) float64) (ns, vs []float64) {
	for _, s := range run.Sizes {
		src := s.Steward
		if limit {
			src = s.Limit
		}
		if x, ok := src[m]; ok && x.N > 0 {
			ns = append(ns, float64(s.N))
			vs = append(vs, get(x))
		}
	}
	return ns, vs
}

func med(s stats.Summary) float64 { return s.Median }
func p99(s stats.Summary) float64 { return s.P99 }

// report renders a run as the Markdown of docs/performance.md.
func report(run *runResult) string {
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	w("Command: `%s`  \n", strings.TrimSpace(run.Command))
	w("Started %s, %.0f s wall; %s; terminal %s.  \n", run.Started.Format("2006-01-02 15:04 UTC"), run.Wall, run.Machine, run.Terminal)
	w("Code: %s.  \n", run.Code)
	w("Load average (1, 5, 15 min): %s at the start, %s at the end", run.LoadStart, run.LoadEnd)
	for _, s := range run.Sizes {
		w("; %d claims: %s → %s", s.N, s.Load[0], s.Load[1])
	}
	w(".\n\n")
	w("| measure | claims | median | p99 | limit median | limit p99 | ratio (median) | ratio (p99) |\n")
	w("|---|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, m := range phase.Measures {
		for _, s := range run.Sizes {
			x, ok := s.Steward[m]
			if !ok {
				continue
			}
			l := s.Limit[m]
			w("| %s | %d | %s | %s | %s | %s | %s | %s |\n", labels[m], s.N, format(m, x.Median), format(m, x.P99),
				format(m, l.Median), format(m, l.P99), ratio(stats.Ratio(x.Median, l.Median)), ratio(stats.Ratio(x.P99, l.P99)))
		}
	}
	w("\nSamples per size: ")
	var ns []string
	for _, s := range run.Sizes {
		ns = append(ns, fmt.Sprintf("%d claims: %d cold starts, %d lock renames, %d DB commits, %d key presses of each kind",
			s.N, s.Steward[phase.ColdFrame].N, s.Steward[phase.LockFrame].N, s.Steward[phase.DBFrame].N, s.Steward[phase.KeyMove].N))
	}
	w("%s.\n", strings.Join(ns, "; "))
	w("\n**Growth** — the exponent k of cost ≈ c·n^k fitted over %s claims (0 flat, 1 linear), and the cost at 10,000 claims over the cost at 100:\n\n", sizesText(run))
	w("| measure | k (median) | k (p99) | limit k | ×cost 100→10,000 (median) | (p99) |\n|---|---:|---:|---:|---:|---:|\n")
	for _, m := range phase.Measures {
		ns, vs := series(run, m, false, med)
		if len(ns) == 0 {
			continue
		}
		_, ps := series(run, m, false, p99)
		lns, lvs := series(run, m, true, med)
		w("| %s | %s | %s | %s | %s | %s |\n", labels[m], expo(ns, vs), expo(ns, ps), expo(lns, lvs),
			ratio(stats.Growth(ns, vs, 100, 10000)), ratio(stats.Growth(ns, ps, 100, 10000)))
	}
	w("\n**Targets** at 10,000 claims (issue 8):\n\n| target | measured | verdict |\n|---|---:|---|\n")
	for _, t := range targets {
		v, ok := t.value(run, false)
		if !ok {
			w("| %s | — | not measured (10,000 claims not in -sizes) |\n", t.label)
			continue
		}
		verdict := t.verdict(v)
		if l, ok := t.value(run, true); ok && t.stat != "growth" && l > t.max {
			verdict += fmt.Sprintf("; its physical limit is %s, itself over the target", t.show(l))
		}
		w("| %s | %s | %s |\n", t.label, t.show(v), verdict)
	}
	for _, s := range run.Sizes {
		for _, n := range s.Notes {
			w("\nNote (%d claims): %s\n", s.N, n)
		}
	}
	return b.String()
}

func sizesText(run *runResult) string {
	var s []string
	for _, x := range run.Sizes {
		s = append(s, fmt.Sprint(x.N))
	}
	return strings.Join(s, ", ")
}

func expo(ns, vs []float64) string {
	k, ok := stats.Exponent(ns, vs)
	if !ok {
		return "—"
	}
	return fmt.Sprintf("%.2f", k)
}

// target is one of issue 8's targets at 10,000 claims.
type target struct {
	label   string
	measure string
	stat    string  // "p99", "median" or "growth" (median cost at 10,000 over at 100)
	max     float64 // seconds, fraction of a core, bytes, or a factor
}

var targets = []target{
	{"lock rename → frame, p99 ≤ 50 ms", phase.LockFrame, "p99", 0.050},
	{"DB commit → frame, p99 ≤ 100 ms", phase.DBFrame, "p99", 0.100},
	{"key j/k → frame, p99 ≤ 16 ms", phase.KeyMove, "p99", 0.016},
	{"filter keystroke → frame, p99 ≤ 16 ms", phase.KeyFilter, "p99", 0.016},
	{"view switch → frame, p99 ≤ 16 ms", phase.KeyView, "p99", 0.016},
	{"cold start → first frame, p99 ≤ 1 s", phase.ColdFrame, "p99", 1},
	{"idle CPU ≤ 1% of one core", phase.IdleCPU, "median", 0.01},
	{"peak RSS ≤ 150 MB", phase.PeakRSS, "median", 150e6},
	{"one lock rename at 10,000 ≤ 2× its cost at 100 (median, to frame)", phase.LockFrame, "growth", 2},
	{"one DB commit at 10,000 ≤ 2× its cost at 100 (median, to frame)", phase.DBFrame, "growth", 2},
}

// value returns the target's statistic at 10,000 claims, of the workbench or of its limit.
func (t target) value(run *runResult, limit bool) (float64, bool) {
	if t.stat == "growth" {
		ns, vs := series(run, t.measure, limit, med)
		g := stats.Growth(ns, vs, 100, 10000)
		return g, !math.IsNaN(g)
	}
	for _, s := range run.Sizes {
		src := s.Steward
		if limit {
			src = s.Limit
		}
		if x, ok := src[t.measure]; ok && s.N == 10000 && x.N > 0 {
			if t.stat == "p99" {
				return x.P99, true
			}
			return x.Median, true
		}
	}
	return 0, false
}

func (t target) show(v float64) string {
	if t.stat == "growth" {
		return ratio(v)
	}
	return format(t.measure, v)
}

func (t target) verdict(v float64) string {
	if v <= t.max {
		return "met"
	}
	if t.stat == "growth" {
		return fmt.Sprintf("**missed**: %s the cost at 100, %s over the 2× allowed", ratio(v), ratio(v/t.max))
	}
	return fmt.Sprintf("**missed** by %s (%s the target)", format(t.measure, v-t.max), ratio(v/t.max))
}
