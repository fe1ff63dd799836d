package policy

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/hydra-lsp/hydra/engine"
	"github.com/hydra-lsp/hydra/sim"
)

// rootHits runs the uncertainty policy on trials errors whose root token is drawn uniformly
// among the tokens before the error, with the simulated model's logprobs at the given AUC
// (sim.TokenSurprisal; two reported alternatives, as the simulator reports them). It returns
// how often the policy rolled back to the root's line, and how often a pick that ignores the
// logprobs would, in expectation (the root line's share of the tokens).
func rootHits(t *testing.T, auc float64, trials int, seed uint64) (hits int, chance float64) {
	rng := rand.New(rand.NewPCG(seed, seed))
	p := mustPolicy(t, "uncertainty")
	for range trials {
		tr, e := failChain(20, nil, nil, "undeclared_identifier")
		n := e.Off / 5
		root := rng.IntN(n)
		toks := make([]engine.TokenInfo, n)
		for i := range toks {
			s := sim.TokenSurprisal(rng, i == root, auc)
			q := math.Exp(-s)
			h := 0.0
			if q > 0 && q < 1 {
				h = -q*math.Log(q) - (1-q)*math.Log(1-q)
			}
			toks[i] = engine.TokenInfo{Off: 5 * i, Text: tr.text[5*i : 5*i+5], Logprob: -s, Entropy: h}
		}
		tr.rollout(1).Tokens = toks
		rootLine := lineOf(tr.text, 5*root)
		if one(t, p.OnNode(e, tr.state(e, 100))) == rootLine {
			hits++
		}
		perLine := 0
		for i := range n {
			if lineOf(tr.text, 5*i) == rootLine {
				perLine++
			}
		}
		chance += float64(perLine) / float64(n)
	}
	return hits, chance
}

// TestUncertaintyGetsNoTellAtAUCOneHalf: with logprob-auc = 0.5 the simulated logprobs carry no
// signal, and the uncertainty baseline finds the root's line no more often than chance (a
// one-sided binomial test at 3.5 standard deviations, fixed seed); with a strong signal it does
// far better, so the test can tell the two apart.
func TestUncertaintyGetsNoTellAtAUCOneHalf(t *testing.T) {
	const trials = 3000
	hits, chance := rootHits(t, 0.5, trials, 11)
	p := chance / trials
	sd := math.Sqrt(trials * p * (1 - p))
	if float64(hits) > chance+3.5*sd {
		t.Errorf("logprob-auc 0.5: root's line found %d times in %d, chance %.0f ± %.0f", hits, trials, chance, sd)
	}
	strong, strongChance := rootHits(t, 0.99, trials, 12)
	if float64(strong) < 3*strongChance {
		t.Errorf("logprob-auc 0.99: root's line found %d times in %d, chance %.0f: the test cannot see a signal", strong, trials, strongChance)
	}
	t.Logf("root's line found: auc 0.5 %d/%d (chance %.0f), auc 0.99 %d/%d (chance %.0f)", hits, trials, chance, strong, trials, strongChance)
}
