package policy

import "math"

// This file is TokPol's model as pure functions (docs/POLICIES.md derives it):
//
//   candidates c1 < … < cm (offsets of rollback points), the error at e, generation started at g = c1;
//   bucket i is the stretch [ci, c(i+1)) with c(m+1) = e (the last bucket includes e itself);
//   the latent root cause r lies in one bucket; a repair from cj can only succeed if cj ≤ r,
//   i.e. if r's bucket index is ≥ j, and then succeeds with probability q.

// Prior is the shape of TokPol's prior over the root cause r, in terms of the normalised
// repair distance d = (e − r) / (e − g): 0 at the error, 1 at the start of generation.
type Prior struct {
	// Local is the mass of "fixable locally": r lies after the nearest rollback point.
	Local float64
	// Far is the mass of d ≥ 1/2, spread evenly over [1/2, 1].
	Far float64
	// The rest, 1 − Local − Far, is spread over d in [0, 1/2): evenly, or, when Decreasing,
	// with a density that falls linearly from d = 0 to nothing at d = 1/2.
	Decreasing bool

	// Scope weighs the density inside the top-level declaration that encloses the error (from
	// its start to the error) Scope times as much as outside it, within each distance class
	// (near and far): in C and C++ most names a function uses are declared in that function.
	// The class masses Local, Far and 1 − Local − Far stay what they are; 0 or 1 means no
	// weighting (the paper's shape exactly).
	Scope float64
}

// DefaultPrior is the paper's measurement (§2.4): 20–40% of errors are fixed locally and
// 30–40% need a rollback at least half-way; we take the middle of each range, spread evenly
// within each class (the paper's shape: Decreasing off, Scope 1). The shape options stay
// available (tokpol:decreasing=1:scope=2) but are not the default: rerun at the shipped budget
// they did not win (docs/POLICIES.md, figures policies-default-world and
// policies-misspecified-world).
func DefaultPrior() Prior { return Prior{Local: 0.30, Far: 0.35, Scope: 1} }

// near is the mass spread over d in [0, 1/2).
func (p Prior) near() float64 { return math.Max(0, 1-p.Local-p.Far) }

// PriorMass returns the prior probability of each bucket: mass[i] is P(c(i+1) ≤ r < c(i+2)) in
// the 1-based notation above, i.e. the bucket that starts at cands[i]. cands are the candidate
// offsets in increasing order, e the error offset (≥ the last candidate), scope the offset where
// the top-level declaration enclosing the error starts (a candidate; see Prior.Scope). The
// masses sum to 1.
func PriorMass(p Prior, cands []int, e, scope int) []float64 {
	local, near, far := PriorParts(p, cands, e, scope)
	mass := make([]float64, len(cands))
	for i := range mass {
		mass[i] = local[i] + near[i] + far[i]
	}
	return normalize(mass)
}

// PriorParts splits PriorMass by distance class: the mass each bucket holds from the local
// spike, from the near half (d < 1/2) and from the far half (d ≥ 1/2). Their sum over buckets
// and classes is 1 (but for rounding); TokPol's learning uses the split to tell which class an
// observed root came from.
func PriorParts(p Prior, cands []int, e, scope int) (local, near, far []float64) {
	m := len(cands)
	if m == 0 {
		return nil, nil, nil
	}
	local, near, far = make([]float64, m), make([]float64, m), make([]float64, m)
	g := cands[0]
	span := float64(e - g)
	if span <= 0 {
		local[m-1] = 1
		return local, near, far
	}
	// Position x ↔ distance d = (e − x)/span. The near part covers x in (e − span/2, e],
	// the far part x in [g, e − span/2].
	mid := float64(e) - span/2
	farPart := func(lo, hi float64) float64 { return overlap(lo, hi, float64(g), mid) / (span / 2) * p.Far }
	nearPart := func(lo, hi float64) float64 {
		if !p.Decreasing {
			return overlap(lo, hi, mid, float64(e)) / (span / 2) * p.near()
		}
		// Near part in terms of d: the stretch [lo, hi) is d in (dHi, dLo]; the cumulative
		// mass of the density 8(1/2 − d) on [0, d] is 4d − 4d².
		cum := func(d float64) float64 { d = math.Min(math.Max(d, 0), 0.5); return 4*d - 4*d*d }
		dLo, dHi := (float64(e)-lo)/span, (float64(e)-hi)/span
		return p.near() * (cum(dLo) - cum(dHi))
	}
	nearM := near
	for i := 0; i < m; i++ {
		hi := float64(e)
		if i+1 < m {
			hi = float64(cands[i+1])
		}
		far[i], nearM[i] = farPart(float64(cands[i]), hi), nearPart(float64(cands[i]), hi)
	}
	// Scope weighting reshapes the mass within each distance class and keeps the class masses
	// (the paper's figures): far stays Far, near stays 1 − Local − Far.
	if p.Scope > 1 {
		for _, part := range [][]float64{far, nearM} {
			before := sum(part)
			for i := range part {
				if cands[i] >= scope {
					part[i] *= p.Scope
				}
			}
			if after := sum(part); after > 0 {
				for i := range part {
					part[i] *= before / after
				}
			}
		}
	}
	if s := sum(far) + sum(nearM); s > 0 {
		for i := range far {
			far[i] *= (1 - p.Local) / s
			nearM[i] *= (1 - p.Local) / s
		}
		local[m-1] = p.Local
	} else {
		local[m-1] = 1
	}
	return local, near, far
}

// overlap is the length of [a, b) ∩ [c, d).
func overlap(a, b, c, d float64) float64 {
	lo, hi := math.Max(a, c), math.Min(b, d)
	return math.Max(0, hi-lo)
}

// Posterior updates a belief over the buckets after failed repair attempts of the same
// error: a failure from offset a has likelihood 1 − q when r ≥ a (the attempt could have
// worked) and 1 when r < a (it could not). Bucket i counts as r ≥ a when cands[i] ≥ a.
// When every bucket has lost all its mass (q = 1 and a failure from c1), the belief is
// wrong and the uniform belief is returned.
func Posterior(prior []float64, cands []int, failedFrom []int, q float64) []float64 {
	post := make([]float64, len(prior))
	for i, w := range prior {
		for _, a := range failedFrom {
			if cands[i] >= a {
				w *= 1 - q
			}
		}
		post[i] = w
	}
	if sum(post) == 0 {
		for i := range post {
			post[i] = 1
		}
	}
	return normalize(post)
}

// Plan solves TokPol's expected-cost recursion over a belief w (w[i] the mass of the bucket
// starting at candidate i), regeneration costs t (t[i] the tokens to regenerate from candidate
// i past the error) and success probability q. With S(k) = w[0] + … + w[k−1] (1-based k),
//
//	C(0) = t(1)/q
//	C(k) = min over j ≤ k of  t(j) + F(j, k) · C(j−1),   F(j, k) = 1 − q · (1 − S(j−1)/S(k))
//
// C(k) is the expected cost of passing the error when the root is known to lie before c(k+1);
// F(j, k) is the chance that the repair from cj fails: it works only if r ≥ cj, which given
// r < c(k+1) has probability 1 − S(j−1)/S(k), and then with probability q. For q = 1,
// F(j, k) = S(j−1)/S(k) = P(r < cj | r < c(k+1)), C(0) is never used (F(1, k) = 0) and this is
// the recursion of docs/POLICIES.md exactly. For q < 1 the search is assumed to continue below cj
// after a failure, and C(0), what is left after a failure from the root, is the cost of
// retrying from the root until it works (so the root alone costs t(1)/q, as it should); TokPol
// re-plans with the Bayes-updated belief after every failure anyway. Plan returns the 0-based
// index of the best first rollback point for k = m and its expected cost C(m). Ties go to the
// later candidate.
func Plan(w, t []float64, q float64) (best int, cost float64) {
	m := len(w)
	if m == 0 {
		return -1, 0
	}
	S := make([]float64, m+1)
	for i := 0; i < m; i++ {
		S[i+1] = S[i] + w[i]
	}
	C := make([]float64, m+1)
	arg := make([]int, m+1)
	if q > 0 {
		C[0] = t[0] / q
	}
	for k := 1; k <= m; k++ {
		C[k] = math.Inf(1)
		for j := 1; j <= k; j++ {
			below := 0.0 // P(r < cj | r < c(k+1))
			if S[k] > 0 {
				below = S[j-1] / S[k]
			}
			fail := 1 - q*(1-below)
			c := t[j-1] + fail*C[j-1]
			if c <= C[k] {
				C[k], arg[k] = c, j
			}
		}
	}
	return arg[m] - 1, C[m]
}

func sum(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s
}

func normalize(xs []float64) []float64 {
	s := sum(xs)
	if s <= 0 {
		return xs
	}
	for i := range xs {
		xs[i] /= s
	}
	return xs
}
