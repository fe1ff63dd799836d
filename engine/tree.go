package engine

import (
	"strings"
	"time"

	"github.com/hydra-lsp/hydra/checkers"
	"github.com/hydra-lsp/hydra/internal/textops"
)

// tree is the search tree of one search (docs/engine.md). It is owned by the search's manager
// goroutine: nothing in it is locked.
//
// The root stands for the starting prefix. Every progress, error, done and fail event of a
// rollout becomes a node hung below the rollout's newest node (its head), so a rollout is the
// path from its start node to its head. Checkpoints hang off progress nodes (and the root) at
// the same offset; the tree holds one reference on each and drops it when the node is pruned or
// the search ends. Checkpoints that match no node (e.g. one after the preamble inside the
// prefix) are kept as spares: any node whose text extends a spare's text may resume it.
type tree struct {
	root      *Node
	nodes     []*Node // every node ever made, by id (pruned ones included, for the trace)
	prefixLen int

	// spares are live checkpoints not attached to a node, oldest first.
	spares []checkers.Checkpoint
	// held counts live checkpoint references held by the tree (nodes and spares).
	held int
	// maxCheckpoints bounds held (0: no bound).
	maxCheckpoints int
	// order lists nodes holding a checkpoint, oldest first, for eviction.
	order []*Node
	// cpIDs remembers the checkpoint each node ever held, for the trace.
	cpIDs map[int]int64
	// start is when the search started; at[i] is when node i was made, since start.
	start time.Time
	at    []time.Duration
}

func newTree(prefix string, maxCheckpoints int) *tree {
	t := &tree{prefixLen: len(prefix), maxCheckpoints: maxCheckpoints, cpIDs: map[int]int64{}, start: time.Now()}
	t.root = &Node{ID: 0, Kind: NodeRoot, Off: len(prefix), Line: lineOf(prefix, len(prefix)), Text: prefix, Rollout: 0}
	t.nodes = append(t.nodes, t.root)
	t.at = append(t.at, 0)
	return t
}

// lineOf is the 1-based line of byte off in text (textops.LineOf, named short for the engine's
// many uses).
func lineOf(text string, off int) int { return textops.LineOf(text, off) }

// add hangs a new node below parent and returns it.
func (t *tree) add(parent *Node, n *Node) *Node {
	n.ID = len(t.nodes)
	n.Parent = parent
	parent.Children = append(parent.Children, n)
	t.nodes = append(t.nodes, n)
	t.at = append(t.at, time.Since(t.start))
	return n
}

// attach gives n the checkpoint cp (whose reference the tree takes over). It reports false when
// n cannot take it (it already has one, or it is pruned); the caller then keeps cp.
func (t *tree) attach(n *Node, cp checkers.Checkpoint) bool {
	if n.Checkpoint != nil || n.Pruned || (n.Kind != NodeProgress && n.Kind != NodeRoot) || cp.Off() != n.Off {
		return false
	}
	n.Checkpoint = cp
	t.cpIDs[n.ID] = cp.ID()
	t.held++
	t.order = append(t.order, n)
	t.evict()
	return true
}

// spare keeps cp, not attached to any node (the tree takes over its reference).
func (t *tree) spare(cp checkers.Checkpoint) {
	t.spares = append(t.spares, cp)
	t.held++
	t.evict()
}

// evict releases checkpoints while more than maxCheckpoints are held: spares first (oldest
// first), then those of nodes other than the root, oldest first.
func (t *tree) evict() {
	for t.maxCheckpoints > 0 && t.held > t.maxCheckpoints {
		if !t.evictOne() {
			return
		}
	}
}

// evictOne releases one checkpoint, reporting false when there is none to release.
func (t *tree) evictOne() bool {
	if len(t.spares) > 0 {
		t.spares[0].Release()
		t.spares = t.spares[1:]
		t.held--
		return true
	}
	for i, n := range t.order {
		if n == t.root || n.Checkpoint == nil {
			continue
		}
		n.Checkpoint.Release()
		n.Checkpoint = nil
		t.held--
		t.order = append(t.order[:i:i], t.order[i+1:]...)
		return true
	}
	return false
}

// dropCheckpoint releases n's checkpoint, if any.
func (t *tree) dropCheckpoint(n *Node) {
	if n.Checkpoint == nil {
		return
	}
	n.Checkpoint.Release()
	n.Checkpoint = nil
	t.held--
	for i, x := range t.order {
		if x == n {
			t.order = append(t.order[:i:i], t.order[i+1:]...)
			break
		}
	}
}

// prune removes n's subtree from the tree: n leaves its parent's children, every node of the
// subtree is marked Pruned and its checkpoint released. The nodes stay in the trace. The root
// cannot be pruned.
func (t *tree) prune(n *Node) {
	if n == nil || n == t.root || n.Pruned {
		return
	}
	if p := n.Parent; p != nil {
		for i, c := range p.Children {
			if c == n {
				p.Children = append(p.Children[:i:i], p.Children[i+1:]...)
				break
			}
		}
	}
	var mark func(x *Node)
	mark = func(x *Node) {
		x.Pruned = true
		t.dropCheckpoint(x)
		for _, c := range x.Children {
			mark(c)
		}
	}
	mark(n)
}

// isAncestor reports whether a is n or one of n's ancestors.
func isAncestor(a, n *Node) bool {
	for x := n; x != nil; x = x.Parent {
		if x == a {
			return true
		}
	}
	return false
}

// nearestCheckpoint returns the live checkpoint with the longest text that is a prefix of
// n's text: n's own, an ancestor's, or a spare's. It returns nil when there is none.
func (t *tree) nearestCheckpoint(n *Node) checkers.Checkpoint {
	var best checkers.Checkpoint
	for x := n; x != nil; x = x.Parent {
		if x.Checkpoint != nil && !x.Pruned {
			best = x.Checkpoint
			break
		}
	}
	for _, cp := range t.spares {
		if cp.Off() <= n.Off && (best == nil || cp.Off() > best.Off()) && strings.HasPrefix(n.Text, cp.Text()) {
			best = cp
		}
	}
	return best
}

// anchorFor returns the deepest live node on the path from the root to head whose offset is
// at most off: where an error at off hangs.
func anchorFor(head *Node, off int) *Node {
	for x := head; x != nil; x = x.Parent {
		if x.Off <= off && !x.Pruned && x.Kind != NodeError && x.Kind != NodeFail {
			return x
		}
	}
	return nil
}

// hangError hangs the error (or fail) node e, made by the rollout whose newest node is head,
// at e's offset: below the deepest live node on head's path whose offset does not pass e.Off.
// Nodes of that path after the anchor are invalidated — the error shows that the progress
// they recorded was provisional (checkers/clang/README.md, lookahead) — and pruned, except those that
// keep reports as still needed (they lie on another live rollout's path). It returns the
// anchor, or nil when there is none (the error lies before the root).
func (t *tree) hangError(head, e *Node, keep func(*Node) bool) *Node {
	anchor := anchorFor(head, e.Off)
	if anchor == nil {
		return nil
	}
	var after []*Node // path nodes after the anchor, head first
	for x := head; x != nil && x != anchor; x = x.Parent {
		after = append(after, x)
	}
	for i := len(after) - 1; i >= 0; i-- {
		if x := after[i]; !keep(x) {
			t.prune(x)
			break
		}
	}
	t.add(anchor, e)
	return anchor
}

// releaseAll drops every checkpoint reference the tree holds.
func (t *tree) releaseAll() {
	for _, n := range t.nodes {
		if n.Checkpoint != nil {
			n.Checkpoint.Release()
			n.Checkpoint = nil
		}
	}
	for _, cp := range t.spares {
		cp.Release()
	}
	t.spares = nil
	t.order = nil
	t.held = 0
}

// trace records the tree.
func (t *tree) trace() []TraceNode {
	out := make([]TraceNode, 0, len(t.nodes))
	for _, n := range t.nodes {
		tn := TraceNode{ID: n.ID, Parent: -1, Kind: n.Kind.String(), Off: n.Off, Line: n.Line,
			Cat: n.Cat, Diag: n.Diag, Rollout: n.Rollout, Pruned: n.Pruned}
		if n.Parent != nil {
			tn.Parent = n.Parent.ID
		}
		tn.Checkpoint = t.cpIDs[n.ID]
		tn.AtMS = ms(t.at[n.ID])
		out = append(out, tn)
	}
	return out
}

// ms is d in milliseconds, for the trace.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// String names the kind as the trace writes it.
func (k NodeKind) String() string {
	switch k {
	case NodeRoot:
		return "root"
	case NodeProgress:
		return "progress"
	case NodeError:
		return "error"
	case NodeDone:
		return "done"
	case NodeFail:
		return "fail"
	}
	return "unknown"
}
