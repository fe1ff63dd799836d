package policy

import (
	"math"
	"sort"

	"github.com/hydra-lsp/hydra/engine"
)

// Uncertainty is uncertainty-guided rollback (after ROCODE): it rolls back to the last
// candidate before the token the model was least sure of (highest entropy over the reported
// alternatives, or highest surprisal, whichever is larger) between the last error a repair got past
// and the error; when the same error comes back, it looks only before the previous rollback
// point. Without log-probabilities (the request did not ask for them) it falls back to
// local-first escalation. Ask for them with model.Params.Logprobs in the request.
type Uncertainty struct{ opts Options }

// OnNode implements engine.Policy.
func (p *Uncertainty) OnNode(n *engine.Node, s *engine.State) []engine.Action {
	return repair(n, s, p.opts, func(cands []*engine.Node) *engine.Node { return p.choose(s, n, cands) })
}

// choose is the rollback point for error n among cands.
func (p *Uncertainty) choose(s *engine.State, n *engine.Node, cands []*engine.Node) *engine.Node {
	ep := history(s, n, p.opts.SameErrorBytes)
	lo := cands[0].Off
	for _, off := range ep.passed {
		if off < n.Off && off > lo {
			lo = off
		}
	}
	hi := ep.minFailed(n.Off + 1)
	tok, found := mostUncertain(pathTokens(s, n), lo, hi)
	if !found {
		return localFirstChoice(s, n, cands, p.opts.SameErrorBytes)
	}
	c := latestAtOrBefore(cands, tok.Off)
	if len(ep.failed) > 0 && c.Off >= hi {
		c = latestBefore(cands, hi)
	}
	return c
}

// uncertainty is the larger of a token's entropy over the reported alternatives and its
// surprisal (−logprob): a token is suspect when the model's distribution was flat there, or when
// the sampled token was itself unlikely. With few reported alternatives (servers often give the
// top 2–5) the entropy alone misses the second case: a token sampled at probability 0.08 out of
// two alternatives has the same entropy as one sampled at 0.92.
func uncertainty(t engine.TokenInfo) float64 {
	return math.Max(t.Entropy, -t.Logprob)
}

// mostUncertain returns the token with the highest uncertainty whose offset lies in [lo, hi);
// found is false when no token there carries any uncertainty (no logprobs were asked for).
func mostUncertain(toks []engine.TokenInfo, lo, hi int) (best engine.TokenInfo, found bool) {
	top := 0.0
	for _, t := range toks {
		if t.Off < lo || t.Off >= hi {
			continue
		}
		if u := uncertainty(t); u > top {
			best, top, found = t, u, true
		}
	}
	return best, found
}

// pathTokens returns, in offset order, the streamed tokens that make up the text on e's path:
// each stretch of the path comes from the rollout of the node that ends it.
func pathTokens(s *engine.State, e *engine.Node) []engine.TokenInfo {
	type stretch struct{ lo, hi int }
	parts := map[int][]stretch{} // by rollout id
	var ids []int
	path := s.Path(e)
	for i := 1; i < len(path); i++ {
		id := path[i].Rollout
		if _, ok := parts[id]; !ok {
			ids = append(ids, id)
		}
		parts[id] = append(parts[id], stretch{path[i-1].Off, path[i].Off})
	}
	var out []engine.TokenInfo
	for _, id := range ids {
		r := s.Rollout(id)
		if r == nil {
			continue
		}
		for _, t := range r.Tokens {
			for _, p := range parts[id] {
				if t.Off >= p.lo && t.Off <= p.hi {
					out = append(out, t)
					break
				}
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Off < out[j].Off })
	return out
}

// WantsLogprobs implements engine.LogprobsWanter: the search asks for the top 5 alternatives
// per token, and says so when the server sends none (this policy then rolls back local-first).
func (p *Uncertainty) WantsLogprobs() (top int, fallback string) { return 5, "local-first rollback" }
