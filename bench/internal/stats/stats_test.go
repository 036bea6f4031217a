package stats

import (
	"math"
	"testing"
)

func TestSummarize(t *testing.T) {
	t.Parallel()
	xs := make([]float64, 0, 200)
	for i := 200; i >= 1; i-- { // reversed: Summarize sorts a copy
		xs = append(xs, float64(i))
	}
	s := Summarize(xs)
	if s.N != 200 || s.Median != 100.5 || s.P99 != 198 || s.Min != 1 || s.Max != 200 {
		t.Fatalf("Summarize(1..200) = %+v", s)
	}
	if xs[0] != 200 {
		t.Fatal("Summarize sorted its input")
	}
	if got := Summarize(nil); got != (Summary{}) {
		t.Fatalf("Summarize(nil) = %+v", got)
	}
}

func TestPercentile(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		xs   []float64
		p    float64
		want float64
	}{
		{"one sample", []float64{7}, 99, 7},
		{"p99 of 10 is the max", []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 99, 10},
		{"p50 nearest rank", []float64{4, 1, 3, 2}, 50, 2},
		{"p90 of 10", []float64{10, 9, 8, 7, 6, 5, 4, 3, 2, 1}, 90, 9},
		{"p99 of 100", seq(100), 99, 99},
		{"p100 is the max", seq(100), 100, 100},
		{"p0 clamps to the min", seq(5), 0, 1},
		{"empty", nil, 99, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := percentile(tt.xs, tt.p); got != tt.want {
				t.Fatalf("Percentile(%v, %v) = %v, want %v", tt.xs, tt.p, got, tt.want)
			}
		})
	}
}

func TestMedian(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		xs   []float64
		want float64
	}{{[]float64{3, 1, 2}, 2}, {[]float64{4, 1, 3, 2}, 2.5}, {nil, 0}, {[]float64{5}, 5}} {
		if got := Median(tt.xs); got != tt.want {
			t.Errorf("Median(%v) = %v, want %v", tt.xs, got, tt.want)
		}
	}
}

func TestExponent(t *testing.T) {
	t.Parallel()
	sizes := []float64{100, 1000, 10000, 50000}
	for _, k := range []float64{0, 0.5, 1, 2} {
		costs := make([]float64, len(sizes))
		for i, n := range sizes {
			costs[i] = 3e-6 * math.Pow(n, k)
		}
		got, ok := Exponent(sizes, costs)
		if !ok || math.Abs(got-k) > 1e-9 {
			t.Errorf("Exponent of c·n^%v = %v, %v", k, got, ok)
		}
	}
	// Noisy linear costs fit close to 1.
	got, ok := Exponent(sizes, []float64{1.1, 9, 105, 490})
	if !ok || math.Abs(got-1) > 0.05 {
		t.Errorf("Exponent of noisy linear = %v, %v", got, ok)
	}
	// Non-positive costs are skipped; one point left is not a fit.
	if _, ok := Exponent(sizes, []float64{0, -1, 5, math.NaN()}); ok {
		t.Error("Exponent with one usable point reported ok")
	}
	if _, ok := Exponent([]float64{10, 10}, []float64{1, 2}); ok {
		t.Error("Exponent with one distinct size reported ok")
	}
}

func TestRatioAndGrowth(t *testing.T) {
	t.Parallel()
	if got := Ratio(6, 2); got != 3 {
		t.Errorf("Ratio(6, 2) = %v", got)
	}
	if !math.IsNaN(Ratio(1, 0)) || !math.IsNaN(Ratio(math.NaN(), 1)) {
		t.Error("Ratio against a zero limit or of NaN is not NaN")
	}
	sizes := []float64{100, 1000, 10000}
	if got := Growth(sizes, []float64{2, 3, 5}, 100, 10000); got != 2.5 {
		t.Errorf("Growth = %v", got)
	}
	if !math.IsNaN(Growth(sizes, []float64{2, 3, 5}, 100, 50000)) {
		t.Error("Growth to a missing size is not NaN")
	}
}

func seq(n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = float64(i + 1)
	}
	return out
}
