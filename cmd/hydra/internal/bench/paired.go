package bench

import (
	"math"
	"math/rand/v2"
	"sort"

	"github.com/hydra-lsp/hydra/internal/stats"
)

// Interval is a paired comparison of two policies on the same tasks: the geometric mean of the
// per-task ratios A/B and its 95% bootstrap interval (percentile method, tasks resampled).
type Interval struct {
	Ratio float64 `json:"ratio"`
	Lo    float64 `json:"lo"`
	Hi    float64 `json:"hi"`
	Tasks int     `json:"tasks"`
}

// Paired compares policy A with policy B on the erroring tasks, in tokens and in latency.
type Paired struct {
	A       string   `json:"a"`
	B       string   `json:"b"`
	Tokens  Interval `json:"tokens"`
	Latency Interval `json:"latency"`
}

// bootstrapResamples is how many resamples the intervals use.
const bootstrapResamples = 2000

// PairedRatio is the geometric mean of a[i]/b[i] over the pairs where both are positive, with
// its 95% bootstrap interval, resampled with a fixed seed (reproducible).
func PairedRatio(a, b []float64, seed uint64) Interval {
	var logs []float64
	for i := range a {
		if i < len(b) && a[i] > 0 && b[i] > 0 {
			logs = append(logs, math.Log(a[i]/b[i]))
		}
	}
	n := len(logs)
	if n == 0 {
		return Interval{}
	}
	iv := Interval{Ratio: math.Exp(mean(logs)), Tasks: n}
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	means := make([]float64, bootstrapResamples)
	for k := range means {
		s := 0.0
		for range n {
			s += logs[rng.IntN(n)]
		}
		means[k] = s / float64(n)
	}
	sort.Float64s(means)
	iv.Lo, iv.Hi = math.Exp(stats.Quantile(means, 0.025)), math.Exp(stats.Quantile(means, 0.975))
	return iv
}

// pairedOn compares policies a and b on the given tasks (ids), from runs. Runs that failed on
// infrastructure errors are left out, with their pair.
func pairedOn(runs []Run, tasks []string, a, b string) Paired {
	by := map[string]Run{}
	for _, r := range runs {
		by[RunKey(r.Task, r.Policy)] = r
	}
	var ta, tb, la, lb []float64
	for _, id := range tasks {
		x, okA := by[RunKey(id, a)]
		y, okB := by[RunKey(id, b)]
		if !okA || !okB || x.Err != "" || y.Err != "" {
			continue
		}
		ta, tb = append(ta, float64(x.Tokens)), append(tb, float64(y.Tokens))
		la, lb = append(la, x.Latency.Seconds()), append(lb, y.Latency.Seconds())
	}
	return Paired{A: a, B: b, Tokens: PairedRatio(ta, tb, 1), Latency: PairedRatio(la, lb, 2)}
}
