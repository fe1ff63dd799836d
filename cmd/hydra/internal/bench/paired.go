package bench

import (
	"math"
	"math/rand/v2"
	"sort"

	"github.com/hydra-lsp/hydra/internal/stats"
)

// Interval is a paired comparison of two policies on the same tasks: the geometric mean of the
// per-task ratios A/B and its bootstrap interval (percentile method, tasks resampled). Alone
// (PairedRatio) the interval is at 95%; in a table, Holm corrects it for the table's number of
// comparisons (see Holm), and Level says the confidence it was given.
type Interval struct {
	Ratio float64 `json:"ratio"`
	Lo    float64 `json:"lo"`
	Hi    float64 `json:"hi"`
	Tasks int     `json:"tasks"`
	// P is the two-sided bootstrap p-value of "the ratio is 1"; PHolm is P adjusted by Holm's
	// step-down method over the table's comparisons (equal to P before Holm runs).
	P     float64 `json:"p"`
	PHolm float64 `json:"p_holm"`
	// Level is the confidence level of [Lo, Hi]: 0.95 alone, 1 − 0.05/k after Holm, where k is
	// the number of comparisons still in play at this one's step.
	Level float64 `json:"level"`
	// Comparisons is the size of the family Holm corrected for (0: not corrected).
	Comparisons int `json:"comparisons"`

	boot []float64 // the sorted bootstrap means of the log ratios
}

// Alpha is the family-wise error rate of the paired tables.
const Alpha = 0.05

// at sets the interval to confidence level 1 − a from the bootstrap means.
func (iv *Interval) at(a float64) {
	if len(iv.boot) == 0 {
		return // read back from JSON: the resamples are gone, the interval stays as it was
	}
	iv.Level = 1 - a
	iv.Lo, iv.Hi = math.Exp(stats.Quantile(iv.boot, a/2)), math.Exp(stats.Quantile(iv.boot, 1-a/2))
}

// Holm corrects the intervals of one table for multiple comparisons with Holm's step-down
// method at family-wise error rate Alpha: ordered by p-value, the i-th (from 0) of m is tested
// at Alpha/(m−i) and its interval widened to that level; once one is not significant, the rest
// keep that step's level, so none of them is either. "Wins" (an interval wholly below 1) then
// holds for the family at 95%, not for each comparison alone.
func Holm(ivs []*Interval) {
	var live []*Interval
	for _, iv := range ivs {
		if iv.Tasks > 0 && len(iv.boot) > 0 {
			live = append(live, iv)
		}
	}
	m := len(live)
	sort.SliceStable(live, func(i, j int) bool { return live[i].P < live[j].P })
	stopped, adj := -1, 0.0
	for i, iv := range live {
		adj = max(adj, min(1, float64(m-i)*iv.P))
		iv.PHolm, iv.Comparisons = adj, m
		step := i
		if stopped >= 0 {
			step = stopped
		} else if iv.P >= Alpha/float64(m-i) {
			stopped = i
		}
		iv.at(Alpha / float64(m-step))
	}
}

// HolmPaired corrects the token and latency intervals of every comparison in ps as one family.
func HolmPaired(ps []Paired) {
	var ivs []*Interval
	for i := range ps {
		ivs = append(ivs, &ps[i].Tokens, &ps[i].Latency)
	}
	Holm(ivs)
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
// its 95% bootstrap interval and p-value, resampled with a fixed seed (reproducible).
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
	iv.boot = means
	below := sort.SearchFloat64s(means, 0)                                                  // means < 0
	above := len(means) - sort.Search(len(means), func(i int) bool { return means[i] > 0 }) // means > 0
	// Two-sided: twice the smaller tail, counting the observed sample (+1) so it is never 0.
	iv.P = min(1, 2*float64(min(len(means)-above, len(means)-below)+1)/float64(len(means)+1))
	iv.PHolm = iv.P
	iv.at(Alpha)
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
