package sim

import (
	"math"
	"math/rand/v2"
)

// The synthetic logprobs: the surprisal s = −logprob of an ordinary token is log-normal,
// ln s ~ N(surprisalMu, surprisalSigma²) (median 0.05 nats: a code model is sure of most
// tokens). The root token of a fault draws ln s from N(surprisalMu + δ, surprisalSigma²): for two
// normals with the same spread, P(s_root > s_other) = Φ(δ / (σ√2)), so δ = σ√2 · Φ⁻¹(auc) gives
// the root exactly the ROC AUC auc against ordinary tokens. auc = 0.5 gives δ = 0: the root's
// logprob is drawn like every other token's, and nothing in it tells where the root is.
const (
	surprisalMu    = -2.995732273553991 // ln 0.05
	surprisalSigma = 1.5
	maxSurprisal   = 30.0
)

// errPosNote states the first-error position target (see planner.plan).
const errPosNote = "triangular on [0, 1] (median 0.5), normalised by the generated text's length"

// TokenSurprisal draws the surprisal (−logprob, in nats) of one streamed token: a fault's root
// when root is set, separated from ordinary tokens with ROC AUC auc (0 < auc < 1; values at or
// beyond the ends are clamped to a near-perfect tell).
func TokenSurprisal(rng *rand.Rand, root bool, auc float64) float64 {
	ln := surprisalMu + surprisalSigma*rng.NormFloat64()
	if root {
		ln += surprisalSigma * math.Sqrt2 * normQuantile(auc)
	}
	return math.Min(math.Exp(ln), maxSurprisal)
}

// normQuantile is Φ⁻¹(p), the standard normal quantile, clamped to ±6.
func normQuantile(p float64) float64 {
	z := math.Sqrt2 * math.Erfinv(2*p-1)
	return math.Max(-6, math.Min(6, z))
}
