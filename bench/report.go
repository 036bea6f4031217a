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
	phase.StatusJSON:   "`status --json` (wall)",
	phase.StatusRSS:    "`status --json` peak RSS",
}

// format renders a value of measure m: milliseconds, % of one core or MB (10⁶ bytes).
func format(m string, v float64) string {
	switch {
	case math.IsNaN(v):
		return "—"
	case m == phase.IdleCPU:
		return fmt.Sprintf("%.2f%%", 100*v)
	case m == phase.PeakRSS || m == phase.StatusRSS:
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
	w(
		"Started %s, %.0f s wall; %s; terminal %s.  \n",
		run.Started.Format("2006-01-02 15:04 UTC"),
		run.Wall,
		run.Machine,
		run.Terminal,
	)
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
			w(
				"| %s | %d | %s | %s | %s | %s | %s | %s |\n",
				labels[m],
				s.N,
				format(m, x.Median),
				format(m, x.P99),
				format(
					m,
					l.Median,
				),
				format(m, l.P99),
				ratio(stats.Ratio(x.Median, l.Median)),
				ratio(stats.Ratio(x.P99, l.P99)),
			)
		}
	}
	w("\nSamples per size: ")
	var ns []string
	for _, s := range run.Sizes {
		x := fmt.Sprintf("%d claims: ", s.N)
		if s.Steward[phase.ColdFrame].N > 0 {
			x += fmt.Sprintf(
				"%d cold starts, %d lock renames, %d DB commits, %d key presses of each kind, ",
				s.Steward[phase.ColdFrame].N,
				s.Steward[phase.LockFrame].N,
				s.Steward[phase.DBFrame].N,
				s.Steward[phase.KeyMove].N,
			)
		}
		x += fmt.Sprintf("%d runs of `status --json`", s.Steward[phase.StatusJSON].N)
		if s.StatusBytes > 0 {
			x += fmt.Sprintf(" (%s of output, every claim listed)", format(phase.StatusRSS, float64(s.StatusBytes)))
		}
		ns = append(ns, x)
	}
	w("%s.\n", strings.Join(ns, "; "))
	w(
		"\n**Growth** — the exponent k of cost ≈ c·n^k fitted over %s claims (0 flat, 1 linear), and the cost at 10,000 "+
			"claims over the cost at 100:\n\n",
		sizesText(run),
	)
	w(
		"| measure | k (median) | k (p99) | limit k | ×cost 100→10,000 (median) | (p99) |\n|---|---:|---:|---:|---:|---:|\n",
	)
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
	w(
		"\n**Targets** (the ratios are to the physical limit measured in the same run):\n\n| target | measured | verdict " +
			"|\n|---|---:|---|\n",
	)
	for _, t := range targets {
		v, ok := t.value(run, false)
		if !ok {
			w("| %s | — | not measured (%s) |\n", t.label, t.missing())
			continue
		}
		verdict := t.verdict(v)
		if l, ok := t.value(run, true); ok && (t.stat == "p99" || t.stat == "median") && l > t.max {
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

// target is one of the performance targets docs/performance.md states.
type target struct {
	label   string
	measure string
	n       int // the fleet size it is judged at (the largest size for "growth"; 0 for "exponent")
	// stat is "p99", "median", "ratio" (median ÷ the limit's median), "growth" (median at n ÷
	// median at 100) or "exponent" (k over 1,000…50,000).
	stat string
	max  float64 // seconds, bytes, or a factor
}

var targets = []target{
	{"10,000: cold start → first frame, p99 ≤ 1 s", phase.ColdFrame, 10000, "p99", 1},
	{"10,000: peak RSS ≤ 150 MB", phase.PeakRSS, 10000, "median", 150e6},
	{"10,000: idle CPU ≤ 2× the empty program's", phase.IdleCPU, 10000, "ratio", 2},
	{"10,000: lock rename → frame, p99 ≤ 50 ms", phase.LockFrame, 10000, "p99", 0.050},
	{"10,000: DB commit → frame, p99 ≤ 80 ms", phase.DBFrame, 10000, "p99", 0.080},
	{"50,000: cold start → first frame, p99 ≤ 5 s", phase.ColdFrame, 50000, "p99", 5},
	{"50,000: peak RSS ≤ 600 MB", phase.PeakRSS, 50000, "median", 600e6},
	{"50,000: idle CPU ≤ 3× the empty program's", phase.IdleCPU, 50000, "ratio", 3},
	{"50,000: lock rename → frame, p99 ≤ 150 ms", phase.LockFrame, 50000, "p99", 0.150},
	{"50,000: DB commit → frame, p99 ≤ 150 ms", phase.DBFrame, 50000, "p99", 0.150},
	{"100,000: `status --json` peak RSS ≤ 400 MB", phase.StatusRSS, 100000, "median", 400e6},
	{"100,000: `status --json` wall ≤ 3× the raw read", phase.StatusJSON, 100000, "ratio", 3},
	{"cold start → first frame grows at most linearly (k ≤ 1.0 over 1,000…50,000)", phase.ColdFrame, 0, "exponent", 1},
	{"peak RSS grows at most linearly (k ≤ 1.0 over 1,000…50,000)", phase.PeakRSS, 0, "exponent", 1},
	{"one lock rename at 10,000 ≤ 2× its cost at 100 (median, to frame)", phase.LockFrame, 10000, "growth", 2},
	{"one DB commit at 10,000 ≤ 2× its cost at 100 (median, to frame)", phase.DBFrame, 10000, "growth", 2},
	{"one lock rename at 50,000 ≤ 2× its cost at 100 (median, to frame)", phase.LockFrame, 50000, "growth", 2},
	{"one DB commit at 50,000 ≤ 2× its cost at 100 (median, to frame)", phase.DBFrame, 50000, "growth", 2},
}

// missing says why a target has no value.
func (t target) missing() string {
	switch t.stat {
	case "exponent":
		return "fewer than two of 1,000…50,000 claims in -sizes"
	case "growth":
		return fmt.Sprintf("100 or %d claims not in -sizes", t.n)
	}
	return fmt.Sprintf("%d claims not in -sizes, or above -workbench-max", t.n)
}

// value returns the target's statistic, of the workbench or of its limit.
func (t target) value(run *runResult, limit bool) (float64, bool) {
	switch t.stat {
	case "growth":
		ns, vs := series(run, t.measure, limit, med)
		g := stats.Growth(ns, vs, 100, float64(t.n))
		return g, !math.IsNaN(g)
	case "exponent":
		ns, vs := series(run, t.measure, limit, med)
		var xs, ys []float64
		for i := range ns {
			if ns[i] >= 1000 && ns[i] <= 50000 {
				xs, ys = append(xs, ns[i]), append(ys, vs[i])
			}
		}
		return stats.Exponent(xs, ys)
	}
	for _, s := range run.Sizes {
		src := s.Steward
		if limit {
			src = s.Limit
		}
		x, ok := src[t.measure]
		if !ok || s.N != t.n || x.N == 0 {
			continue
		}
		switch t.stat {
		case "p99":
			return x.P99, true
		case "ratio":
			if limit {
				return 0, false
			}
			r := stats.Ratio(x.Median, s.Limit[t.measure].Median)
			return r, !math.IsNaN(r)
		}
		return x.Median, true
	}
	return 0, false
}

func (t target) show(v float64) string {
	switch t.stat {
	case "growth", "ratio":
		return ratio(v)
	case "exponent":
		return fmt.Sprintf("k = %.2f", v)
	}
	return format(t.measure, v)
}

func (t target) verdict(v float64) string {
	if v <= t.max {
		return "met"
	}
	switch t.stat {
	case "growth":
		return fmt.Sprintf("**missed**: %s the cost at 100, %s over the 2× allowed", ratio(v), ratio(v/t.max))
	case "ratio":
		return fmt.Sprintf("**missed**: %s the limit, %s the %s allowed", ratio(v), ratio(v/t.max), ratio(t.max))
	case "exponent":
		return fmt.Sprintf("**missed**: k = %.2f", v)
	}
	return fmt.Sprintf("**missed** by %s (%s the target)", format(t.measure, v-t.max), ratio(v/t.max))
}
