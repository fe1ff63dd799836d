package policy

import "github.com/hydra-lsp/hydra/engine"

// Parallel is parallel exploration: on an error it spawns repairs from Width rollback points at
// once (the nearest candidate, the root, and points spread evenly between), keeps the first
// rollout that gets past the error (accepted progress beyond it, or the end of the program) and
// kills the others. When every repair of a group ends in the same error again, the next group
// explores only before the earliest rollback point that failed.
type Parallel struct{ opts Options }

// OnNode implements engine.Policy.
func (p *Parallel) OnNode(n *engine.Node, s *engine.State) []engine.Action {
	others := liveOthers(s, n.Rollout)
	switch n.Kind {
	case engine.NodeDone:
		return kills(others)
	case engine.NodeProgress:
		if len(others) > 0 && p.passedTarget(s, n) {
			return kills(others)
		}
		return nil
	case engine.NodeFail:
		if len(others) > 0 {
			return nil
		}
		return retryAfterFailure(s, n)
	case engine.NodeError:
		if !firstErrorOfRollout(s, n) {
			return nil
		}
		var acts []engine.Action
		if len(others) > 0 {
			if !p.passedTarget(s, n) {
				return nil // siblings are still exploring this error
			}
			// This rollout got past its error before failing anew: it wins its group.
			acts = kills(others)
		}
		cands := s.Candidates(n)
		if len(cands) == 0 {
			return acts
		}
		ep := history(s, n, p.opts.SameErrorBytes)
		if len(ep.failed) > 0 {
			ref := ep.minFailed(n.Off)
			var before []*engine.Node
			for _, c := range cands {
				if c.Off < ref {
					before = append(before, c)
				}
			}
			if len(before) > 0 {
				cands = before
			}
		}
		for _, c := range spread(cands, p.opts.Width) {
			acts = append(acts, engine.Spawn{From: c, Feedback: feedback(n)})
		}
		return acts
	}
	return nil
}

// passedTarget reports whether node n of its rollout lies past the error the rollout was
// spawned to repair (by more than the same-error threshold; an error that is not the same
// one counts too).
func (p *Parallel) passedTarget(s *engine.State, n *engine.Node) bool {
	r := s.Rollout(n.Rollout)
	if r == nil || r.Start == nil {
		return false
	}
	var target *engine.Node
	for _, e := range s.Errors() {
		if e.Rollout < r.ID && e != n && onPath(s, r.Start, e) {
			target = e
		}
	}
	if target == nil {
		return false
	}
	if n.Kind == engine.NodeError {
		return !sameError(target, n, p.opts.SameErrorBytes) && n.Off > target.Off
	}
	return n.Off > target.Off+p.opts.SameErrorBytes
}

// onPath reports whether a lies on the path from the root to b.
func onPath(s *engine.State, a, b *engine.Node) bool {
	for x := b; x != nil; x = x.Parent {
		if x == a {
			return true
		}
	}
	return false
}

// liveOthers returns the live rollouts other than id.
func liveOthers(s *engine.State, id int) []*engine.RolloutView {
	var out []*engine.RolloutView
	for _, r := range s.Active() {
		if r.ID != id && r.Live {
			out = append(out, r)
		}
	}
	return out
}

func kills(rs []*engine.RolloutView) []engine.Action {
	var acts []engine.Action
	for _, r := range rs {
		acts = append(acts, engine.Kill{Rollout: r.ID})
	}
	return acts
}

// spread picks up to k candidates: the last one, the first one and others evenly between,
// nearest first.
func spread(cands []*engine.Node, k int) []*engine.Node {
	m := len(cands)
	if m <= k {
		out := make([]*engine.Node, m)
		for i := range cands {
			out[i] = cands[m-1-i]
		}
		return out
	}
	var out []*engine.Node
	seen := map[int]bool{}
	for i := 0; i < k; i++ {
		idx := m - 1
		if k > 1 {
			idx = (m - 1) - (i*(m-1)+(k-1)/2)/(k-1)
		}
		if !seen[idx] {
			seen[idx] = true
			out = append(out, cands[idx])
		}
	}
	return out
}
