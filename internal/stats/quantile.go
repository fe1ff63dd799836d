// Package stats holds the one quantile convention behind every figure Hydra's benchmarks report
// (hydra bench, bench checker, bench lsp-proxy, the simulated model's summary and the Go
// benchmarks): Hyndman and Fan's type 7, linear interpolation between order statistics, which is
// NumPy's and R's default.
package stats

import (
	"math"
	"slices"
)

// Quantile is the q-quantile (0 ≤ q ≤ 1) of xs by Hyndman and Fan's type 7: with xs sorted,
// position h = q·(n−1), the value interpolated linearly between xs[⌊h⌋] and xs[⌈h⌉]. It is 0 for
// no values; q outside [0, 1] is clamped; xs is not modified.
func Quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	h := min(max(q, 0), 1) * float64(len(s)-1)
	lo, hi := int(math.Floor(h)), int(math.Ceil(h))
	return s[lo] + (s[hi]-s[lo])*(h-float64(lo))
}

// Median is Quantile(xs, 0.5).
func Median(xs []float64) float64 { return Quantile(xs, 0.5) }
