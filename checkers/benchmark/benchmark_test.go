package benchmark

import (
	"reflect"
	"testing"
)

func TestPercentile(t *testing.T) {
	xs := []float64{5, 1, 4, 2, 3}
	tests := []struct {
		q    float64
		want float64
	}{{0.5, 3}, {1, 5}, {0.99, 5}, {0.2, 1}}
	for _, tt := range tests {
		if got := percentile(xs, tt.q); got != tt.want {
			t.Errorf("percentile(%v) = %v, want %v", tt.q, got, tt.want)
		}
	}
	if percentile(nil, 0.5) != 0 || mean(nil) != 0 {
		t.Error("no samples must give 0")
	}
	if xs[0] != 5 {
		t.Error("percentile sorted its input in place")
	}
}

func TestSamplePointsSpreadOverTheCode(t *testing.T) {
	tests := []struct {
		first, total, n int
		want            []int
	}{
		{10, 20, 4, []int{12, 14, 16, 18}},
		{0, 3, 5, []int{0, 1, 2}},
		{5, 5, 3, nil},
	}
	for _, tt := range tests {
		if got := samplePoints(tt.first, tt.total, tt.n); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("samplePoints(%d, %d, %d) = %v, want %v", tt.first, tt.total, tt.n, got, tt.want)
		}
	}
}
