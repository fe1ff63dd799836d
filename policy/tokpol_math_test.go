package policy

import (
	"math"
	"testing"
)

func near(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Abs(a[i]-b[i]) > 1e-9 {
			return false
		}
	}
	return true
}

func TestPriorMassSpreadsThePapersShape(t *testing.T) {
	tests := []struct {
		name  string
		prior Prior
		cands []int
		e     int
		scope int
		want  []float64
	}{
		{
			// span 100, half-way at 50: far 0.35 over [0,50), near 0.35 over [50,100), local 0.3 on the last bucket.
			name: "three candidates", prior: Prior{Local: 0.3, Far: 0.35}, cands: []int{0, 50, 80}, e: 100,
			want: []float64{0.35, 0.35 * 30 / 50, 0.35*20/50 + 0.3},
		},
		{
			// prefix of 40 bytes not generated: span 60, half-way at 70.
			name: "offset start", prior: Prior{Local: 0.2, Far: 0.4}, cands: []int{40, 70}, e: 100,
			want: []float64{0.4, 0.4 + 0.2},
		},
		{
			// Near mass 0.35 with density 8(1/2 − d): [50,80) is d in (0.2, 0.5]: 0.35·(1 − (0.8−0.16)) = 0.126;
			// [80,100) is d in [0, 0.2]: 0.35·0.64 = 0.224.
			name: "decreasing near mass", prior: Prior{Local: 0.3, Far: 0.35, Decreasing: true}, cands: []int{0, 50, 80}, e: 100,
			want: []float64{0.35, 0.35 * 0.36, 0.35*0.64 + 0.3},
		},
		{
			name: "root only", prior: DefaultPrior(), cands: []int{0}, e: 100,
			want: []float64{1},
		},
		{
			// Scope 3 from 50 on covers the whole near half: the near mass is reshaped only
			// within itself (evenly, so not at all) and the far mass keeps its 0.35.
			name: "scope covering a class", prior: Prior{Local: 0.3, Far: 0.35, Scope: 3}, cands: []int{0, 50, 80}, e: 100, scope: 50,
			want: []float64{0.35, 0.35 * 30 / 50, 0.35*20/50 + 0.3},
		},
		{
			// Scope 3 from 80 on: near parts 0.21 (outside) and 3·0.14 (inside), sum 0.63, scaled
			// to 0.35: 0.35·0.21/0.63, 0.35·0.42/0.63; far untouched.
			name: "scope weighting", prior: Prior{Local: 0.3, Far: 0.35, Scope: 3}, cands: []int{0, 50, 80}, e: 100, scope: 80,
			want: []float64{0.35, 0.35 * 0.21 / 0.63, 0.35*0.42/0.63 + 0.3},
		},
		{
			name: "error at the start", prior: DefaultPrior(), cands: []int{10}, e: 10,
			want: []float64{1},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := PriorMass(tc.prior, tc.cands, tc.e, tc.scope)
			if !near(got, tc.want) {
				t.Errorf("PriorMass = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestScopeWeightingKeepsThePapersClassMasses(t *testing.T) {
	// Candidates every 10 bytes from 0 to 190, error at 200: half-way at 100, so buckets 0..9
	// are the far half and 10..19 the near half. Whatever the enclosing declaration, the far
	// half keeps Far and the near half 1 − Local − Far (plus Local on the last bucket).
	var cands []int
	for c := 0; c < 200; c += 10 {
		cands = append(cands, c)
	}
	for _, scope := range []int{0, 50, 100, 150, 190} {
		// Two scope-weighted priors (the default has no scope weighting: Scope 1).
		for _, p := range []Prior{{Local: 0.3, Far: 0.35, Decreasing: true, Scope: 2}, {Local: 0.2, Far: 0.4, Scope: 4}} {
			w := PriorMass(p, cands, 200, scope)
			if far := sum(w[:10]); math.Abs(far-p.Far) > 1e-9 {
				t.Errorf("prior %+v, scope %d: far mass %.4f, want %.4f", p, scope, far, p.Far)
			}
			if nearM := sum(w[10:19]) + w[19] - p.Local; math.Abs(nearM-p.near()) > 1e-9 {
				t.Errorf("prior %+v, scope %d: near mass %.4f, want %.4f", p, scope, nearM, p.near())
			}
			flat := p
			flat.Scope = 1
			w1 := PriorMass(flat, cands, 200, scope)
			if scope == 150 && w[15]/w[14] < 1.5*w1[15]/w1[14] {
				t.Errorf("prior %+v, scope %d: no extra weight inside the declaration: %v", p, scope, w)
			}
		}
	}
}

func TestPosteriorShiftsMassBelowFailedAttempts(t *testing.T) {
	prior := []float64{0.35, 0.21, 0.44}
	cands := []int{0, 50, 80}
	tests := []struct {
		name   string
		failed []int
		q      float64
		want   []float64
	}{
		{"no failure keeps the prior", nil, 0.7, []float64{0.35, 0.21, 0.44}},
		{"local failure, q=0.5", []int{80}, 0.5, []float64{0.35 / 0.78, 0.21 / 0.78, 0.22 / 0.78}},
		{"local failure, q=1 rules the last bucket out", []int{80}, 1, []float64{0.35 / 0.56, 0.21 / 0.56, 0}},
		{"two failures, q=1", []int{80, 50}, 1, []float64{1, 0, 0}},
		{"failure from the middle, q=0.5", []int{50}, 0.5, []float64{0.35 / 0.675, 0.105 / 0.675, 0.22 / 0.675}},
		{"failure from the root with q=1 is a wrong belief: uniform", []int{0}, 1, []float64{1.0 / 3, 1.0 / 3, 1.0 / 3}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Posterior(append([]float64(nil), prior...), cands, tc.failed, tc.q)
			if !near(got, tc.want) {
				t.Errorf("Posterior = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestPlanMinimisesExpectedTokens(t *testing.T) {
	tests := []struct {
		name     string
		w, t     []float64
		wantBest int
		wantCost float64
	}{
		// C1 = 30; C2 = min(30, 20+0.4·30=32) = 30; C3 = min(30, 20+0.2·30=26, 10+0.5·30=25) = 25.
		{"local is worth a try", []float64{0.2, 0.3, 0.5}, []float64{30, 20, 10}, 2, 25},
		// C1 = 30; C2 = min(30, 20+(6/7)·30) = 30; C3 = min(30, 20+0.6·30=38, 10+0.7·30=31) = 30.
		{"root when the cause is likely early", []float64{0.6, 0.1, 0.3}, []float64{30, 20, 10}, 0, 30},
		// C1 = 40; C2 = min(40, 10+0.5·40=30) = 30; C3 = min(40, 10+0.5·40=30, 9+1·30=39) → j=2, 30.
		{"skip a candidate with no mass", []float64{0.5, 0.5, 0}, []float64{40, 10, 9}, 1, 30},
		{"one candidate", []float64{1}, []float64{7}, 0, 7},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			best, cost := Plan(tc.w, tc.t, 1)
			if best != tc.wantBest || math.Abs(cost-tc.wantCost) > 1e-9 {
				t.Errorf("Plan = (%d, %v), want (%d, %v)", best, cost, tc.wantBest, tc.wantCost)
			}
		})
	}
}

func TestPlanDiscountsRepairsThatMayFailAnyway(t *testing.T) {
	tests := []struct {
		name     string
		w, t     []float64
		q        float64
		wantBest int
		wantCost float64
	}{
		// q=0.5: C0 = 30/0.5 = 60; C1 = 30 + 0.5·60 = 60; C2 = min(60, 20 + (1−0.5·0.6)·60 = 62) = 60;
		// C3 = min(60, 20 + (1−0.5·0.8)·60 = 56, 10 + (1−0.5·0.5)·60 = 55) = 55: local.
		{"the root is dear when repairs may fail", []float64{0.2, 0.3, 0.5}, []float64{30, 20, 10}, 0.5, 2, 55},
		// q=0.8: C0 = 37.5; C1 = 30 + 0.2·37.5 = 37.5; C2 = min(37.5, 20 + (1−0.8·(1/7))·37.5) = 37.5;
		// C3 = min(37.5, 20 + (1−0.8·0.4)·37.5 = 45.5, 10 + (1−0.8·0.3)·37.5 = 38.5) = 37.5: the root.
		{"root when the cause is likely early", []float64{0.6, 0.1, 0.3}, []float64{30, 20, 10}, 0.8, 0, 37.5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			best, cost := Plan(tc.w, tc.t, tc.q)
			if best != tc.wantBest || math.Abs(cost-tc.wantCost) > 1e-9 {
				t.Errorf("Plan = (%d, %v), want (%d, %v)", best, cost, tc.wantBest, tc.wantCost)
			}
		})
	}
}
