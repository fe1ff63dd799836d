package policy

import (
	"fmt"

	"github.com/hydra-lsp/hydra/engine"
	"github.com/hydra-lsp/hydra/internal/textops"
)

// episode is what the error history says about the error being handled: the chain of
// "same error again" failures it ends, and the errors that earlier repairs got past.
type episode struct {
	// target is the error being handled; first is the error that began its chain.
	target, first *engine.Node
	// failed holds, oldest first, the start offsets of the repair attempts that ended in the
	// same error again: each is a rollback point now known (up to the success probability)
	// to lie after the root cause.
	failed []int
	// passed holds the offsets of earlier errors that a repair got past (progress).
	passed []int
}

// sameError reports whether b is the failure a again: the same category, and an offset within
// threshold bytes of a's. Anything else means the repair that led to b made progress.
func sameError(a, b *engine.Node, threshold int) bool {
	if a == nil || b == nil || a.Cat != b.Cat {
		return false
	}
	d := a.Off - b.Off
	if d < 0 {
		d = -d
	}
	return d <= threshold
}

// history reads the failure history of s up to the error e (the newest error) into an episode.
// Only the first error of each rollout counts: a rollout's later errors are the same attempt.
func history(s *engine.State, e *engine.Node, threshold int) episode {
	errs := append([]*engine.Node(nil), s.Errors()...)
	if len(errs) == 0 || errs[len(errs)-1] != e {
		// The engine lists e among the errors; a hand-made State may not.
		found := false
		for _, x := range errs {
			found = found || x == e
		}
		if !found {
			errs = append(errs, e)
		}
	}
	seen := map[int]bool{}
	var ep episode
	for _, x := range errs {
		if seen[x.Rollout] && x != e {
			continue
		}
		seen[x.Rollout] = true
		if ep.target != nil && sameError(ep.target, x, threshold) {
			if r := s.Rollout(x.Rollout); r != nil && r.Start != nil {
				ep.failed = append(ep.failed, r.Start.Off)
			}
			ep.target = x
		} else {
			if ep.target != nil {
				ep.passed = append(ep.passed, ep.target.Off)
			}
			ep = episode{target: x, first: x, passed: ep.passed}
		}
		if x == e {
			break
		}
	}
	return ep
}

// minFailed is the earliest start of a failed attempt, or def when there is none.
func (ep episode) minFailed(def int) int {
	m := def
	for _, f := range ep.failed {
		if f < m {
			m = f
		}
	}
	return m
}

// firstErrorOfRollout reports whether e is the first error its rollout reported; policies
// act once per failed rollout.
func firstErrorOfRollout(s *engine.State, e *engine.Node) bool {
	for _, x := range s.Errors() {
		if x == e {
			return true
		}
		if x.Rollout == e.Rollout {
			return false
		}
	}
	return true
}

// lastAttempt reports whether the next rollout the search may start is its last one.
func lastAttempt(s *engine.State) bool {
	limit := s.Budget().MaxAttempts
	if limit <= 0 {
		limit = engine.DefaultBudget().MaxAttempts
	}
	return limit-s.Attempts() == 1
}

// latestAtOrBefore returns the last candidate whose offset is at most off, or the first
// candidate when none is.
func latestAtOrBefore(cands []*engine.Node, off int) *engine.Node {
	best := cands[0]
	for _, c := range cands {
		if c.Off <= off {
			best = c
		}
	}
	return best
}

// latestBefore returns the last candidate whose offset is below off, or the first candidate
// when none is.
func latestBefore(cands []*engine.Node, off int) *engine.Node {
	return latestAtOrBefore(cands, off-1)
}

// feedback is the repair hint a spawn carries: the compiler's own message and where it was.
// The engine writes it as a code comment at the end of the prompt.
func feedback(e *engine.Node) string {
	if e.Diag == "" {
		return ""
	}
	line := e.Line
	if line == 0 {
		line = textops.LineOf(e.Text, e.Off)
	}
	return fmt.Sprintf("line %d: error: %s", line, e.Diag)
}

// spawnFrom is the action of repairing e from c.
func spawnFrom(c, e *engine.Node) []engine.Action {
	return []engine.Action{engine.Spawn{From: c, Feedback: feedback(e)}}
}

// retryAfterFailure handles a rollout that failed without a checker error (a cut stream or a
// crashed checker): try again from its last accepted node.
func retryAfterFailure(s *engine.State, n *engine.Node) []engine.Action {
	cands := s.Candidates(n)
	if len(cands) == 0 {
		return nil
	}
	return []engine.Action{engine.Spawn{From: cands[len(cands)-1]}}
}

// repair is how a single-rollout policy answers node n: a rollout that failed without a checker
// error is retried (retryAfterFailure); the first error of a rollout is repaired from the
// candidate choose picks among its rollback candidates (never empty), or from the first
// candidate when the next rollout is the search's last one (the last resort, unless
// opts.NoLastResort); any other node gets no action.
func repair(n *engine.Node, s *engine.State, opts Options, choose func(cands []*engine.Node) *engine.Node) []engine.Action {
	if n.Kind == engine.NodeFail {
		return retryAfterFailure(s, n)
	}
	cands, ok := repairable(s, n)
	if !ok {
		return nil
	}
	if !opts.NoLastResort && lastAttempt(s) {
		return spawnFrom(cands[0], n)
	}
	return spawnFrom(choose(cands), n)
}

// repairable reports whether n is a node a single-rollout policy answers with a repair, and
// returns its rollback candidates.
func repairable(s *engine.State, n *engine.Node) ([]*engine.Node, bool) {
	if n.Kind != engine.NodeError || !firstErrorOfRollout(s, n) {
		return nil, false
	}
	cands := s.Candidates(n)
	return cands, len(cands) > 0
}
