package policy

import "github.com/hydra-lsp/hydra/engine"

// TokPol is Hydra's token-minimising policy: it keeps a Bayesian belief over where the root
// cause of the current error lies among the rollback candidates, updates it after each failed
// repair of the same error, and rolls back to the candidate that minimises the expected output
// tokens until the error is passed (docs/POLICIES.md, "TokPol").
type TokPol struct{ opts Options }

// OnNode implements engine.Policy.
func (p *TokPol) OnNode(n *engine.Node, s *engine.State) []engine.Action {
	return repair(n, s, p.opts, func(cands []*engine.Node) *engine.Node {
		b := p.Belief(s, n, cands)
		best, _ := Plan(b.Posterior, b.Cost, p.opts.SuccessProb)
		return cands[best]
	})
}

// Belief is TokPol's view of one error: per candidate, the prior and posterior mass of the
// bucket that starts there and the tokens a repair from there costs.
type Belief struct {
	Offsets   []int
	Failed    []int // starts of the failed attempts of this error, oldest first
	Prior     []float64
	Posterior []float64
	Cost      []float64
}

// Belief computes TokPol's belief about error e over its candidates cands (State.Candidates).
func (p *TokPol) Belief(s *engine.State, e *engine.Node, cands []*engine.Node) Belief {
	ep := history(s, e, p.opts.SameErrorBytes)
	offs := make([]int, len(cands))
	for i, c := range cands {
		offs[i] = c.Off
	}
	scope := cands[0].Off
	for i, d := range declStarts(e, cands) {
		if d {
			scope = cands[i].Off
		}
	}
	prior := PriorMass(p.opts.Prior, offs, e.Off, scope)
	post := Posterior(append([]float64(nil), prior...), offs, ep.failed, p.opts.SuccessProb)
	bpt := bytesPerToken(s.Current(), p.opts.BytesPerToken)
	past := max(p.opts.PastTokens, meanOvershoot(s))
	cost := make([]float64, len(cands))
	for i, c := range cands {
		cost[i] = float64(e.Off-c.Off)/bpt + past
	}
	return Belief{Offsets: offs, Failed: ep.failed, Prior: prior, Posterior: post, Cost: cost}
}

// bytesPerToken measures the bytes per token of rollout r's streamed tokens, or returns def
// when it has too few to tell.
func bytesPerToken(r *engine.RolloutView, def float64) float64 {
	if r == nil || len(r.Tokens) < 16 {
		return def
	}
	b := 0
	for _, t := range r.Tokens {
		b += len(t.Text)
	}
	if b == 0 {
		return def
	}
	return float64(b) / float64(len(r.Tokens))
}

// meanOvershoot is the mean overshoot of the rollouts that ended in an error so far.
func meanOvershoot(s *engine.State) float64 {
	n, sum := 0, 0
	seen := map[int]bool{}
	for _, e := range s.Errors() {
		if seen[e.Rollout] {
			continue
		}
		seen[e.Rollout] = true
		if r := s.Rollout(e.Rollout); r != nil && len(r.Tokens) > 0 {
			n++
			sum += overshoot(r, e.Off)
		}
	}
	if n == 0 {
		return 0
	}
	return float64(sum) / float64(n)
}

// overshoot counts the tokens rollout r streamed at or after offset off: what it cost to get
// past the error and learn that it was one (the checker reports an error a chunk or so late,
// and generation does not wait for it).
func overshoot(r *engine.RolloutView, off int) int {
	if r == nil {
		return 0
	}
	n := 0
	for _, t := range r.Tokens {
		if t.Off >= off {
			n++
		}
	}
	return n
}
