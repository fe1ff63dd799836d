package policy

import (
	"github.com/hydra-lsp/hydra/engine"
	"github.com/hydra-lsp/hydra/internal/textops"
)

// TokPol is Hydra's token-minimising policy: it keeps a Bayesian belief over where the root
// cause of the current error lies among the rollback candidates, updates it after each failed
// repair of the same error, and rolls back to the candidate that minimises the expected output
// tokens until the error is passed (docs/POLICIES.md, "TokPol"). It learns the prior's class
// masses and the success probability q from the errors it sees repaired (Learner), starting from
// the paper's figures: within a search, across the searches that share the value, and, with
// WithPersistentLearning, per model across runs.
type TokPol struct {
	opts    Options
	learner *Learner // nil: per model (PersistLearning) or not learning (NoLearning)
}

func newTokPol(o Options) *TokPol {
	p := &TokPol{opts: o}
	switch {
	case o.NoLearning, o.PersistLearning:
	case o.BeliefsFile != "":
		p.learner = FileLearner(o.BeliefsFile, beliefsFrom(o.Prior, o.SuccessProb))
	default:
		p.learner = NewLearner(beliefsFrom(o.Prior, o.SuccessProb))
	}
	return p
}

// learnerFor is the learner the policy uses in search s, or nil when it does not learn.
func (p *TokPol) learnerFor(s *engine.State) *Learner {
	if p.opts.PersistLearning && s != nil {
		return ModelLearner(s.Model())
	}
	return p.learnerForModel("")
}

// learnerForModel is the learner the policy uses for searches of model, or nil when it does
// not learn.
func (p *TokPol) learnerForModel(model string) *Learner {
	switch {
	case p.opts.NoLearning:
		return nil
	case p.opts.PersistLearning:
		if model == "" {
			return nil
		}
		return ModelLearner(model)
	}
	return p.learner
}

// Learned returns where TokPol's learning for searches of model started and what it has
// learned so far (the beliefs it plans with), and false when it does not learn.
func (p *TokPol) Learned(model string) (start, now Beliefs, ok bool) {
	l := p.learnerForModel(model)
	if l == nil {
		return Beliefs{}, Beliefs{}, false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.start, l.b, true
}

// params are the prior and q TokPol plans with in search s: the learner's means, or the
// configured values when it does not learn.
func (p *TokPol) params(s *engine.State) (Prior, float64) {
	prior, q := p.opts.Prior, p.opts.SuccessProb
	if l := p.learnerFor(s); l != nil {
		b := l.Beliefs()
		prior.Local, prior.Far = b.Masses()
		q = b.Q()
	}
	return prior, q
}

// OnNode implements engine.Policy.
func (p *TokPol) OnNode(n *engine.Node, s *engine.State) []engine.Action {
	if l := p.learnerFor(s); l != nil {
		if ep, ok := p.finished(n, s); ok {
			prior, _ := p.params(s)
			l.Observe(prior, ep)
		}
		if ep, ok := p.unfinished(n, s); ok {
			prior, _ := p.params(s)
			l.Observe(prior, ep)
		}
	}
	return repair(n, s, p.opts, func(cands []*engine.Node) *engine.Node {
		b := p.Belief(s, n, cands)
		_, q := p.params(s)
		best, _ := Plan(b.Posterior, b.Cost, q)
		return cands[best]
	})
}

// finished reports the episode that node n shows to have ended: a rollout that repaired an
// error got past it, either to the end (n is Done) or to a different, later error (n is that
// rollout's first error). Each such node is seen once, so each episode is learned from once.
func (p *TokPol) finished(n *engine.Node, s *engine.State) (Episode, bool) {
	r := s.Rollout(n.Rollout)
	if r == nil || r.Start == nil {
		return Episode{}, false
	}
	var prev *engine.Node // the last first-error of another rollout before n
	for _, x := range s.Errors() {
		if x == n {
			break
		}
		if x.Rollout != n.Rollout && firstErrorOfRollout(s, x) {
			prev = x
		}
	}
	switch {
	case prev == nil:
		return Episode{}, false
	case n.Kind == engine.NodeDone:
	case n.Kind == engine.NodeError && firstErrorOfRollout(s, n) && !sameError(prev, n, p.opts.SameErrorBytes) && n.Off > prev.Off:
	default:
		return Episode{}, false
	}
	ep := history(s, prev, p.opts.SameErrorBytes)
	if r.Start.Off > ep.target.Off {
		return Episode{}, false // the rollout did not repair that error
	}
	cands := s.Candidates(ep.target)
	if len(cands) == 0 {
		return Episode{}, false
	}
	return Episode{Err: ep.target.Off, Failed: ep.failed, Success: r.Start.Off, Scope: scopeOf(cands),
		Changed: min(textops.CommonPrefix(ep.target.Text, n.Text), ep.target.Off), Cands: offsets(cands)}, true
}

// unfinished reports the episode that node n ends without a repair getting past it: n is a
// rollout's first error, it is the same error again after failed repairs, and the search has
// no attempt left (the engine ends it). Its failures are still evidence about the root.
func (p *TokPol) unfinished(n *engine.Node, s *engine.State) (Episode, bool) {
	if n.Kind != engine.NodeError || !firstErrorOfRollout(s, n) {
		return Episode{}, false
	}
	limit := s.Budget().MaxAttempts
	if limit <= 0 {
		limit = engine.DefaultBudget().MaxAttempts
	}
	if s.Attempts() < limit {
		return Episode{}, false
	}
	ep := history(s, n, p.opts.SameErrorBytes)
	cands := s.Candidates(n)
	if len(ep.failed) == 0 || len(cands) == 0 {
		return Episode{}, false
	}
	return Episode{Err: n.Off, Failed: ep.failed, Scope: scopeOf(cands), Unfinished: true, Cands: offsets(cands)}, true
}

// offsets are the offsets of nodes, in order.
func offsets(nodes []*engine.Node) []int {
	out := make([]int, len(nodes))
	for i, c := range nodes {
		out[i] = c.Off
	}
	return out
}

// scopeOf is the offset where the top-level declaration enclosing error e starts (a candidate).
func scopeOf(cands []*engine.Node) int {
	scope := cands[0].Off
	for _, c := range cands {
		if c.EndsDecl() {
			scope = c.Off
		}
	}
	return scope
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

// Belief computes TokPol's belief about error e over its candidates cands (State.Candidates),
// with the prior and q it currently holds.
func (p *TokPol) Belief(s *engine.State, e *engine.Node, cands []*engine.Node) Belief {
	ep := history(s, e, p.opts.SameErrorBytes)
	offs := make([]int, len(cands))
	for i, c := range cands {
		offs[i] = c.Off
	}
	pr, q := p.params(s)
	prior := PriorMass(pr, offs, e.Off, scopeOf(cands))
	post := Posterior(append([]float64(nil), prior...), offs, ep.failed, q)
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
