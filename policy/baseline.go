package policy

import "github.com/hydra-lsp/hydra/engine"

// PostHoc is the post-hoc repair baseline: the engine generates the whole program and only
// then compiles it (engine.PostHoc); on an error the policy asks for the whole program again,
// from the root, with the compiler's message as feedback.
type PostHoc struct{ opts Options }

// Mode implements engine.Moder.
func (*PostHoc) Mode() engine.Mode { return engine.PostHoc }

// OnNode implements engine.Policy.
func (p *PostHoc) OnNode(n *engine.Node, s *engine.State) []engine.Action {
	switch {
	case n.Kind == engine.NodeFail:
		return []engine.Action{engine.Spawn{From: s.Root()}}
	case n.Kind == engine.NodeError && firstErrorOfRollout(s, n):
		return spawnFrom(s.Root(), n)
	}
	return nil
}

// Unconstrained is the no-checking baseline: the engine never checks (engine.Unchecked) and
// the program is taken as the model wrote it.
type Unconstrained struct{}

// Mode implements engine.Moder.
func (Unconstrained) Mode() engine.Mode { return engine.Unchecked }

// OnNode implements engine.Policy; it never acts.
func (Unconstrained) OnNode(*engine.Node, *engine.State) []engine.Action { return nil }

// Lockstep stands for per-token constrained decoding: generation waits for the checker after
// every chunk (engine.Lockstep) and a repair only ever regenerates the current line.
type Lockstep struct{ opts Options }

// Mode implements engine.Moder.
func (*Lockstep) Mode() engine.Mode { return engine.Lockstep }

// OnNode implements engine.Policy.
func (p *Lockstep) OnNode(n *engine.Node, s *engine.State) []engine.Action {
	if n.Kind == engine.NodeFail {
		return retryAfterFailure(s, n)
	}
	cands, ok := repairable(s, n)
	if !ok {
		return nil
	}
	return spawnFrom(latestAtOrBefore(cands, n.Off), n)
}
