package engine

import "strings"

// DefaultPolicy returns the policy a Request without one gets (issue 3, item 7): on an error
// it retries from the last progress node before the line of the error, with the diagnostic as
// feedback; when the same error comes back (same category, within SameErrorLines lines) it
// escalates to earlier progress nodes, 1, 3, 7, … candidates further back, up to the root.
// A failed rollout (stream cut; a checker crash is an error node) is retried from where it broke off, escalating
// the same way when it keeps failing there.
func DefaultPolicy() Policy { return defaultPolicy{} }

// SameErrorLines is how many lines apart two errors of the same category may be and still
// count as the same failure (docs/POLICIES.md: "within a threshold of the old offset").
const SameErrorLines = 2

type defaultPolicy struct{}

// OnNode implements Policy.
func (defaultPolicy) OnNode(n *Node, s *State) []Action {
	switch n.Kind {
	case NodeError:
		cands := s.Candidates(n)
		if len(cands) == 0 {
			return nil
		}
		base := beforeLine(cands, n)
		idx := max(base-escalation(SameErrorRepeats(n, s.Errors())), 0)
		return []Action{Spawn{From: cands[idx], Feedback: FeedbackFor(n)}}
	case NodeFail:
		cands := s.Candidates(n)
		if len(cands) == 0 {
			return nil
		}
		repeats := 0
		if p := n.Parent; p != nil {
			for _, c := range p.Children {
				if c != n && c.Kind == NodeFail {
					repeats++
				}
			}
		}
		idx := max(len(cands)-1-escalation(repeats), 0)
		return []Action{Spawn{From: cands[idx], Feedback: FeedbackFor(n)}}
	}
	return nil
}

// escalation is how many candidates back the k-th repeat of a failure goes: 0, 1, 3, 7, …
func escalation(k int) int {
	if k > 30 {
		k = 30
	}
	return 1<<k - 1
}

// beforeLine returns the index of the last candidate that ends at or before the start of the
// error's line (0, the first candidate, when none does).
func beforeLine(cands []*Node, e *Node) int {
	text := e.Text
	off := min(e.Off, len(text))
	lineStart := strings.LastIndexByte(text[:off], '\n') + 1
	idx := 0
	for i, c := range cands {
		if c.Off <= lineStart {
			idx = i
		}
	}
	return idx
}

// SameErrorRepeats counts how many of the errors just before e in history (the search's error
// nodes, oldest first; e itself may be the last) are the same failure as e: the same category
// within SameErrorLines lines. It stops at the first different error.
func SameErrorRepeats(e *Node, history []*Node) int {
	k := 0
	for i := len(history) - 1; i >= 0; i-- {
		h := history[i]
		if h == e {
			continue
		}
		if h.Cat != e.Cat || abs(h.Line-e.Line) > SameErrorLines {
			break
		}
		k++
	}
	return k
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
