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

// A chunk's copy-on-write faults after a checkpoint are the shim's time (its shim_us), not the
// driver's: the driver's share is what the Go path spends beyond its shim_us, less what the raw
// client spends beyond its own.
func TestSplitChargesTheShimsTimeToTheShim(t *testing.T) {
	s := samples{chunk: map[int][2]float64{
		3: {0.50, 0.40}, // Go path: 0.5 ms round trip, 0.4 ms in the shim (faults after a fork)
		4: {0.20, 0.05},
		9: {0.30, 0.10}, // no raw baseline for chunk 9: left out
	}}
	s.split(map[int][2]float64{
		3: {0.15, 0.05}, // raw client: 0.15 ms round trip, 0.05 ms in the shim (no checkpoints)
		4: {0.10, 0.06},
	})
	const eps = 1e-9
	if len(s.bdShim) != 2 || len(s.bdIPC) != 2 || len(s.bdDriver) != 2 {
		t.Fatalf("%d/%d/%d samples, want 2 (the chunks with a raw baseline)", len(s.bdShim), len(s.bdIPC), len(s.bdDriver))
	}
	// The samples come in map order: chunk 3's is the one whose shim time is 0.40.
	got := map[string][3]float64{}
	for i := range s.bdShim {
		k := "chunk 4"
		if s.bdShim[i] > 0.3 {
			k = "chunk 3"
		}
		got[k] = [3]float64{s.bdShim[i], s.bdIPC[i], s.bdDriver[i]}
	}
	want := map[string][3]float64{"chunk 3": {0.40, 0.10, 0.00}, "chunk 4": {0.05, 0.04, 0.11}}
	for k, w := range want {
		g, ok := got[k]
		if !ok {
			t.Fatalf("no sample for %s: %v", k, got)
		}
		for j, name := range []string{"shim", "ipc", "driver"} {
			if d := g[j] - w[j]; d > eps || d < -eps {
				t.Errorf("%s: %s %v, want %v", k, name, g[j], w[j])
			}
		}
	}
}
