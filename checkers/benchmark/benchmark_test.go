package benchmark

import (
	"reflect"
	"sort"
	"testing"
)

func TestMeanOfNoSamplesIsZero(t *testing.T) {
	if mean(nil) != 0 || mean([]float64{1, 2, 6}) != 3 {
		t.Error("mean is wrong")
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
	tests := []struct {
		name             string
		goPath, raw      [2]float64 // round trip, shim_us (ms)
		shim, ipc, drive float64
	}{
		// 0.4 ms of the Go path's 0.5 in the shim (faults after a fork); the raw client, which
		// takes no checkpoints, 0.15 with 0.05 in the shim: transport 0.1, nothing left for the driver.
		{"faults after a fork", [2]float64{0.50, 0.40}, [2]float64{0.15, 0.05}, 0.40, 0.10, 0},
		{"no faults", [2]float64{0.20, 0.05}, [2]float64{0.10, 0.06}, 0.05, 0.04, 0.11},
	}
	const eps = 1e-9
	for _, tt := range tests {
		// Chunk 9 has no raw baseline: it is left out.
		s := samples{chunk: map[int][2]float64{3: tt.goPath, 9: {0.30, 0.10}}}
		s.split(map[int][2]float64{3: tt.raw})
		if len(s.bdShim) != 1 || len(s.bdIPC) != 1 || len(s.bdDriver) != 1 {
			t.Fatalf("%s: %d/%d/%d samples, want 1 (the chunk with a raw baseline)", tt.name, len(s.bdShim), len(s.bdIPC), len(s.bdDriver))
		}
		for _, c := range []struct {
			what      string
			got, want float64
		}{{"shim", s.bdShim[0], tt.shim}, {"ipc", s.bdIPC[0], tt.ipc}, {"driver", s.bdDriver[0], tt.drive}} {
			if d := c.got - c.want; d > eps || d < -eps {
				t.Errorf("%s: %s %v, want %v", tt.name, c.what, c.got, c.want)
			}
		}
	}
}

// The one-processor round trips give the transport as the round trip less the shim's own time,
// never below zero.
func TestSplitOneProcessor(t *testing.T) {
	var s samples
	s.splitOneProcessor(map[int][2]float64{4: {0.05, 0.02}, 7: {0.01, 0.03}})
	if len(s.oneRT) != 2 || len(s.oneIPC) != 2 {
		t.Fatalf("%d round trips, %d ipc samples: want 2 each", len(s.oneRT), len(s.oneIPC))
	}
	sort.Float64s(s.oneRT)
	sort.Float64s(s.oneIPC)
	const eps = 1e-9
	if s.oneRT[0] != 0.01 || s.oneRT[1] != 0.05 {
		t.Errorf("round trips %v, want [0.01 0.05]", s.oneRT)
	}
	if s.oneIPC[0] != 0 || s.oneIPC[1] < 0.03-eps || s.oneIPC[1] > 0.03+eps {
		t.Errorf("ipc %v, want [0 0.03]", s.oneIPC)
	}
}

func TestParseLoadAverage(t *testing.T) {
	la, err := parseLoadAverage("0.52 1.58 12.00 1/467 12345\n")
	if err != nil || la != [3]float64{0.52, 1.58, 12} {
		t.Errorf("got %v, %v; want [0.52 1.58 12]", la, err)
	}
	for _, bad := range []string{"", "0.5 1.5", "0.5 x 1.5 1/2 3"} {
		if _, err := parseLoadAverage(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
