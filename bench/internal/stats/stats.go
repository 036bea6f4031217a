// Package stats is the arithmetic of the benchmark harness: percentiles over repeated runs,
// ratios against a physical limit, and the growth exponent of a cost over the fleet size.
// It is pure: no clock, no IO.
package stats

import (
	"math"
	"slices"
)

// Summary describes the samples of one measure.
type Summary struct {
	N      int     `json:"n"`
	Median float64 `json:"median"`
	P99    float64 `json:"p99"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
}

// Summarize returns the median, p99, minimum and maximum of xs (zero Summary when empty).
func Summarize(xs []float64) Summary {
	if len(xs) == 0 {
		return Summary{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return Summary{N: len(s), Median: median(s), P99: rank(s, 99), Min: s[0], Max: s[len(s)-1]}
}

// Median returns the middle of xs (the mean of the two middle values when len(xs) is even),
// or 0 when xs is empty.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return median(s)
}

// percentile returns the p-th percentile of xs by the nearest-rank method: the smallest value
// such that at least p% of the samples are at or below it. With fewer than 100 samples the
// 99th percentile is therefore the maximum. It returns 0 when xs is empty; p is clamped to
// (0, 100].
func percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return rank(s, p)
}

func median(s []float64) float64 {
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// rank is the nearest-rank percentile of the sorted, non-empty s.
func rank(s []float64, p float64) float64 {
	p = math.Min(math.Max(p, 0), 100)
	r := int(math.Ceil(p / 100 * float64(len(s))))
	r = min(max(r, 1), len(s))
	return s[r-1]
}

// Ratio returns cost/limit, or NaN when the limit is not positive.
func Ratio(cost, limit float64) float64 {
	if limit <= 0 || math.IsNaN(limit) || math.IsNaN(cost) {
		return math.NaN()
	}
	return cost / limit
}

// Exponent returns the growth exponent of cost over size: the slope k of the least-squares
// line through (log n, log cost), so that cost ≈ c·n^k (k = 1 is linear, 0 flat). Points with
// a non-positive size or cost are skipped; ok is false when fewer than two distinct sizes
// remain.
func Exponent(sizes, costs []float64) (k float64, ok bool) {
	var xs, ys []float64
	for i := range min(len(sizes), len(costs)) {
		if sizes[i] > 0 && costs[i] > 0 && !math.IsNaN(costs[i]) && !math.IsInf(costs[i], 0) {
			xs = append(xs, math.Log(sizes[i]))
			ys = append(ys, math.Log(costs[i]))
		}
	}
	if len(xs) < 2 {
		return 0, false
	}
	var mx, my float64
	for i := range xs {
		mx += xs[i]
		my += ys[i]
	}
	mx /= float64(len(xs))
	my /= float64(len(ys))
	var sxy, sxx float64
	for i := range xs {
		sxy += (xs[i] - mx) * (ys[i] - my)
		sxx += (xs[i] - mx) * (xs[i] - mx)
	}
	if sxx == 0 {
		return 0, false
	}
	return sxy / sxx, true
}

// Growth returns cost at size b over cost at size a from parallel slices, or NaN when either
// size is missing or its cost not positive.
func Growth(sizes, costs []float64, a, b float64) float64 {
	ca, cb := math.NaN(), math.NaN()
	for i := range min(len(sizes), len(costs)) {
		switch sizes[i] {
		case a:
			ca = costs[i]
		case b:
			cb = costs[i]
		}
	}
	return Ratio(cb, ca)
}
