package bench

import (
	"math"
	"testing"
)

// TestHolmWidensIntervalsAndAdjustsPValues: three comparisons, one clearly below 1, one weakly
// below 1, one around 1. After Holm the first keeps a win at 1 − 0.05/3, the later ones are
// given no narrower an interval than alone, p-values only grow and stay ordered, and a
// comparison Holm stops at does not win even if its own 95% interval excluded 1.
func TestHolmWidensIntervalsAndAdjustsPValues(t *testing.T) {
	strong := PairedRatio([]float64{1, 1.1, 0.9, 1, 1.05, 0.95, 1, 1}, []float64{2, 2, 2, 2, 2, 2, 2, 2}, 1)
	weak := PairedRatio([]float64{1, 2.1, 1.5, 1.9, 1.2, 2.2, 1.8, 1.7}, []float64{2, 2, 2, 2, 2, 2, 2, 2}, 1)
	flat := PairedRatio([]float64{1, 3, 2, 1.5, 2.5, 2, 1, 3}, []float64{2, 2, 2, 2, 2, 2, 2, 2}, 1)
	alone := []Interval{strong, weak, flat}
	if strong.Level != 0.95 || strong.P >= 0.01 || flat.P < 0.2 {
		t.Fatalf("before Holm: strong %+v, flat %+v", strong, flat)
	}
	ivs := []*Interval{&strong, &weak, &flat}
	Holm(ivs)
	if math.Abs(strong.Level-(1-0.05/3)) > 1e-12 || strong.Comparisons != 3 || verdict(strong) != "wins" {
		t.Errorf("strongest comparison after Holm: %+v, want a win at level 1-0.05/3", strong)
	}
	for i, iv := range ivs {
		if iv.Lo > alone[i].Lo || iv.Hi < alone[i].Hi {
			t.Errorf("comparison %d: Holm narrowed [%v, %v] to [%v, %v]", i, alone[i].Lo, alone[i].Hi, iv.Lo, iv.Hi)
		}
		if iv.PHolm < iv.P {
			t.Errorf("comparison %d: adjusted p %v below raw %v", i, iv.PHolm, iv.P)
		}
		if (verdict(*iv) == "wins") != (iv.PHolm < Alpha && iv.Ratio < 1) {
			t.Errorf("comparison %d: verdict %s disagrees with adjusted p %v", i, verdict(*iv), iv.PHolm)
		}
	}
	if !(strong.PHolm <= weak.PHolm && weak.PHolm <= flat.PHolm) {
		t.Errorf("adjusted p-values out of order: %v %v %v", strong.PHolm, weak.PHolm, flat.PHolm)
	}
}
