package stats

import (
	"math"
	"testing"
)

func TestQuantileIsType7(t *testing.T) {
	xs := []float64{4, 1, 3, 2}
	// numpy.quantile([4, 1, 3, 2], [0, .5, .75, .99, 1]) = 1, 2.5, 3.25, 3.97, 4
	for _, tc := range []struct{ q, want float64 }{{0, 1}, {0.5, 2.5}, {0.75, 3.25}, {0.99, 3.97}, {1, 4}, {-1, 1}, {2, 4}} {
		if got := Quantile(xs, tc.q); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("Quantile(%v) = %v, want %v", tc.q, got, tc.want)
		}
	}
	if xs[0] != 4 {
		t.Error("Quantile sorted its input in place")
	}
	if Quantile(nil, 0.5) != 0 || Median([]float64{7}) != 7 || Median([]float64{1, 2, 3}) != 2 {
		t.Error("empty, one-value or odd-length median is wrong")
	}
}
