package policy

import (
	"github.com/hydra-lsp/hydra/checkers"
	"github.com/hydra-lsp/hydra/checkers/chunk"
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
	decl := declStarts(e, cands)
	for i := len(cands) - 1; i >= 0; i-- {
		if c := cands[i]; c.Off < ref && decl[i] {
			return c
		}
	}
	return cands[0]
}

// declStarts reports, for each of e's candidates cands, whether it begins a top-level
// declaration: the root, or a candidate after a chunk that ended a declaration or the preamble
// (category decl or preamble) where the brace depth of the text before it, counted from the
// start of the checked text, is 0.
//
// The depth is measured here rather than trusted from the category: the engine's chunker
// counts braces from where each rollout starts, so when the prompt ends inside a function (every
// HumanEval-X task) or a rollout resumes inside one, every statement of that body ends at
// relative depth 0 and is labelled decl. Taken at face value, that makes each statement look
// like the start of a declaration (local-first then escalates one statement at a time, and
// TokPol's enclosing declaration shrinks to the last statement). The category alone never
// misses a real declaration end (the true depth is never below the relative one), so
// requiring both is exact.
func declStarts(e *engine.Node, cands []*engine.Node) []bool {
	out := make([]bool, len(cands))
	ch := chunk.New(chunk.Options{})
	fed := 0
	for i, c := range cands {
		if c.Kind == engine.NodeRoot {
			out[i] = true
			continue
		}
		if c.Cat != checkers.BoundaryDecl && c.Cat != checkers.BoundaryPreamble {
			continue
		}
		if end := min(c.Off, len(e.Text)); end > fed {
			ch.Write(e.Text[fed:end])
			fed = end
		}
		out[i] = ch.Depth() <= 0
	}
	return out
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
