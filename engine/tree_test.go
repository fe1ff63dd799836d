package engine

import (
	"testing"
)

// countedCheckpoint is a reference-counted checkpoint value for the tree's unit tests, which
// check the tree's bookkeeping without processes. (Tests with the real Clang checker are in
// search_test.go.)
type countedCheckpoint struct {
	id   int64
	text string
	refs int
}

func (c *countedCheckpoint) ID() int64    { return c.id }
func (c *countedCheckpoint) Off() int     { return len(c.text) }
func (c *countedCheckpoint) Text() string { return c.text }
func (c *countedCheckpoint) Retain()      { c.refs++ }
func (c *countedCheckpoint) Release()     { c.refs-- }

// chain hangs progress nodes at the ends of the given lines below parent, as one rollout would.
func chain(t *tree, parent *Node, rollout int, text string, lines ...string) []*Node {
	var out []*Node
	off := parent.Off
	for _, l := range lines {
		off += len(l)
		n := t.add(parent, &Node{Kind: NodeProgress, Off: off, Line: lineOf(text, off), Rollout: rollout, Text: text[:off]})
		out = append(out, n)
		parent = n
	}
	return out
}

func TestRetroactiveErrorTruncatesInvalidatedProgress(t *testing.T) {
	prefix := "#include <stdio.h>\n"
	lines := []string{"struct S {\n", "  int f() { return g; }\n", "  int g;\n", "};\n", "int x;\n"}
	text := prefix
	for _, l := range lines {
		text += l
	}
	tr := newTree(prefix, 0)
	nodes := chain(tr, tr.root, 0, text, lines...)
	cp := &countedCheckpoint{id: 7, text: text[:nodes[3].Off], refs: 1}
	if !tr.attach(nodes[3], cp) {
		t.Fatal("attach to a progress node at the checkpoint's offset failed")
	}
	// The error inside the inline member function is reported late, at the class's '}', but
	// its offset lies inside line 3 ("return g"): the progress of lines 3.. is invalid.
	errOff := len(prefix) + len(lines[0]) + len("  int f() { return ")
	e := &Node{Kind: NodeError, Off: errOff, Cat: "undeclared_identifier", Rollout: 0, Text: text[:errOff]}
	anchor := tr.hangError(nodes[4], e, func(*Node) bool { return false })
	if anchor != nodes[0] {
		t.Fatalf("anchor = node %d, want node %d (the last progress before the error)", anchor.ID, nodes[0].ID)
	}
	if e.Parent != nodes[0] {
		t.Fatalf("error hangs below node %d, want %d", e.Parent.ID, nodes[0].ID)
	}
	for _, n := range nodes[1:] {
		if !n.Pruned {
			t.Errorf("node %d at %d after the error's offset %d is not pruned", n.ID, n.Off, errOff)
		}
	}
	if nodes[0].Pruned {
		t.Error("the anchor was pruned")
	}
	if len(nodes[0].Children) != 1 || nodes[0].Children[0] != e {
		t.Errorf("anchor children = %v, want just the error", nodes[0].Children)
	}
	if cp.refs != 0 {
		t.Errorf("checkpoint of an invalidated node has %d references left, want 0", cp.refs)
	}
	s := NewState(StateConfig{Root: tr.root, PrefixLen: len(prefix)})
	c := s.Candidates(e)
	if len(c) != 2 || c[0] != tr.root || c[1] != nodes[0] {
		t.Errorf("candidates = %v, want root and the anchor", ids(c))
	}
}

func TestRetroactiveErrorKeepsNodesOfOtherLiveRollouts(t *testing.T) {
	text := "a;\nb;\nc;\nd;\n"
	tr := newTree("", 0)
	first := chain(tr, tr.root, 0, text, "a;\n", "b;\n")
	// Rollout 1 started from first[1] and is still live; rollout 2 also started there and
	// reports a late error at offset 1 (inside "a;").
	other := chain(tr, first[1], 1, text, "c;\n")
	mine := chain(tr, first[1], 2, text, "c;\n", "d;\n")
	keep := map[*Node]bool{}
	for x := other[0]; x != nil; x = x.Parent {
		keep[x] = true
	}
	e := &Node{Kind: NodeError, Off: 1, Rollout: 2, Text: text[:1]}
	anchor := tr.hangError(mine[1], e, func(x *Node) bool { return keep[x] })
	if anchor != tr.root {
		t.Fatalf("anchor = %d, want the root", anchor.ID)
	}
	if first[0].Pruned || first[1].Pruned || other[0].Pruned {
		t.Error("a node on another live rollout's path was pruned")
	}
	if !mine[0].Pruned || !mine[1].Pruned {
		t.Error("the erroring rollout's own invalidated nodes were not pruned")
	}
}

func TestPruneReleasesSubtreeCheckpoints(t *testing.T) {
	text := "a;\nb;\nc;\n"
	tr := newTree("", 0)
	ns := chain(tr, tr.root, 0, text, "a;\n", "b;\n", "c;\n")
	cps := make([]*countedCheckpoint, 3)
	for i, n := range ns {
		cps[i] = &countedCheckpoint{id: int64(i + 1), text: text[:n.Off], refs: 1}
		tr.attach(n, cps[i])
	}
	tr.prune(ns[1])
	if cps[0].refs != 1 || cps[1].refs != 0 || cps[2].refs != 0 {
		t.Errorf("refs after pruning node 2 = %d %d %d, want 1 0 0", cps[0].refs, cps[1].refs, cps[2].refs)
	}
	if len(ns[0].Children) != 0 {
		t.Error("pruned node still among its parent's children")
	}
	if tr.held != 1 {
		t.Errorf("held = %d, want 1", tr.held)
	}
	tr.releaseAll()
	if cps[0].refs != 0 {
		t.Error("releaseAll left a reference")
	}
	// The trace still shows every node and the checkpoints they held.
	tn := tr.trace()
	if len(tn) != 4 || !tn[2].Pruned || tn[1].Checkpoint != 1 {
		t.Errorf("trace = %+v", tn)
	}
}

func TestNearestCheckpointPrefersLongestAncestorOrSpare(t *testing.T) {
	prefix := "#include <a.h>\nint y;\n"
	text := prefix + "x;\nz;\n"
	tr := newTree(prefix, 0)
	ns := chain(tr, tr.root, 0, text, "x;\n", "z;\n")
	preamble := &countedCheckpoint{id: 1, text: "#include <a.h>\n", refs: 1}
	tr.spare(preamble)
	if got := tr.nearestCheckpoint(ns[1]); got != preamble {
		t.Fatalf("nearest = %v, want the spare preamble checkpoint", got)
	}
	mid := &countedCheckpoint{id: 2, text: text[:ns[0].Off], refs: 1}
	tr.attach(ns[0], mid)
	if got := tr.nearestCheckpoint(ns[1]); got != mid {
		t.Fatalf("nearest = %v, want the ancestor's checkpoint", got)
	}
	unrelated := &countedCheckpoint{id: 3, text: "#include <b.h>\nint y;\nx;\nz;", refs: 1}
	tr.spare(unrelated)
	if got := tr.nearestCheckpoint(ns[1]); got != mid {
		t.Fatalf("nearest = %v, want the ancestor's checkpoint (the longer spare's text differs)", got)
	}
}

func TestEvictionKeepsRootCheckpointWithinBudget(t *testing.T) {
	text := "r;\na;\nb;\nc;\n"
	tr := newTree("r;\n", 2)
	rootCP := &countedCheckpoint{id: 1, text: "r;\n", refs: 1}
	tr.attach(tr.root, rootCP)
	ns := chain(tr, tr.root, 0, text, "a;\n", "b;\n", "c;\n")
	var cps []*countedCheckpoint
	for i, n := range ns {
		cp := &countedCheckpoint{id: int64(i + 2), text: text[:n.Off], refs: 1}
		cps = append(cps, cp)
		tr.attach(n, cp)
	}
	if tr.held != 2 {
		t.Fatalf("held = %d, want the budget 2", tr.held)
	}
	if rootCP.refs != 1 || tr.root.Checkpoint == nil {
		t.Error("the root's checkpoint was evicted")
	}
	if cps[2].refs != 1 || cps[0].refs != 0 || cps[1].refs != 0 {
		t.Errorf("refs = %d %d %d, want the oldest evicted first (0 0 1)", cps[0].refs, cps[1].refs, cps[2].refs)
	}
}

func ids(ns []*Node) []int {
	var out []int
	for _, n := range ns {
		out = append(out, n.ID)
	}
	return out
}
