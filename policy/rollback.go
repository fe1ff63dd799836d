package policy

import (
	"github.com/hydra-lsp/hydra/engine"
	"github.com/hydra-lsp/hydra/internal/textops"
)

// LocalFirst is local-first escalation, the paper's walkthrough: repair first from just before
// the error line; when the same error comes back, roll back to the start of the enclosing
// top-level declaration, then to each earlier declaration in turn, and finally to the root.
type LocalFirst struct{ opts Options }

// OnNode implements engine.Policy.
func (p *LocalFirst) OnNode(n *engine.Node, s *engine.State) []engine.Action {
	return repair(n, s, p.opts, func(cands []*engine.Node) *engine.Node {
		return localFirstChoice(s, n, cands, p.opts.SameErrorBytes)
	})
}

// localFirstChoice is local-first escalation's rollback point for error e.
func localFirstChoice(s *engine.State, e *engine.Node, cands []*engine.Node, threshold int) *engine.Node {
	ep := history(s, e, threshold)
	if len(ep.failed) == 0 {
		return latestAtOrBefore(cands, e.Off)
	}
	ref := ep.minFailed(e.Off)
	for i := len(cands) - 1; i >= 0; i-- {
		if c := cands[i]; c.Off < ref && c.EndsDecl() {
			return c
		}
	}
	return cands[0]
}

// Fixed is fixed-distance rollback: repair from Lines lines before the error line; when the
// same error comes back, from Lines lines before the previous rollback point.
type Fixed struct{ opts Options }

// OnNode implements engine.Policy.
func (p *Fixed) OnNode(n *engine.Node, s *engine.State) []engine.Action {
	return repair(n, s, p.opts, func(cands []*engine.Node) *engine.Node {
		ep := history(s, n, p.opts.SameErrorBytes)
		ref := ep.minFailed(n.Off)
		target := textops.LineOf(n.Text, ref) - p.opts.Lines
		best := cands[0]
		for _, c := range cands {
			if c.Off <= ref && textops.LineOf(n.Text, c.Off) <= target && (len(ep.failed) == 0 || c.Off < ref) {
				best = c
			}
		}
		return best
	})
}

// Random rolls back to a candidate chosen uniformly at random (from the search's seeded
// source), the paper's Appendix E baseline for rollback-point selection.
type Random struct{ opts Options }

// OnNode implements engine.Policy.
func (p *Random) OnNode(n *engine.Node, s *engine.State) []engine.Action {
	return repair(n, s, p.opts, func(cands []*engine.Node) *engine.Node {
		return cands[s.Rand().Intn(len(cands))]
	})
}
