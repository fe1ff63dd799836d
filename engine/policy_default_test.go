package engine

import (
	"strings"
	"testing"
)

// program is a small text with one progress node per line after a one-line prefix.
const program = "int f() {\n" + // prefix (line 1)
	"  int a = 1;\n" + // 2
	"  int b = 2;\n" + // 3
	"  int c = 3;\n" + // 4
	"  int d = 4;\n" + // 5
	"  return e;\n" // 6: the error

func programTree(t *testing.T) (*tree, []*Node) {
	t.Helper()
	lines := strings.SplitAfter(program, "\n")
	lines = lines[:len(lines)-1]
	tr := newTree(lines[0], 0)
	return tr, chain(tr, tr.root, 0, program, lines[1:5]...)
}

func errorAt(tr *tree, parent *Node, line int, cat string) *Node {
	off := 0
	for i := 1; i < line; i++ {
		off += strings.IndexByte(program[off:], '\n') + 1
	}
	off += 9 // inside the line
	return tr.add(parent, &Node{Kind: NodeError, Off: off, Line: line, Cat: cat, Diag: "use of undeclared identifier 'e'", Text: program[:off]})
}

func TestDefaultPolicyEscalatesOnRepeatedError(t *testing.T) {
	tr, ns := programTree(t)
	// Candidates: root(line 1 end) ns[0..3] (ends of lines 2..5).
	cases := []struct {
		name    string
		repeats int // earlier identical errors
		want    *Node
	}{
		{"first error retries from just before its line", 0, ns[3]},
		{"second time goes one candidate back", 1, ns[2]},
		{"third time goes three back", 2, ns[0]},
		{"fourth time reaches the root", 3, tr.root},
		{"and stays at the root", 6, tr.root},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var history []*Node
			for i := 0; i < c.repeats; i++ {
				history = append(history, errorAt(tr, ns[3], 6, "undeclared_identifier"))
			}
			e := errorAt(tr, ns[3], 6, "undeclared_identifier")
			history = append(history, e)
			s := NewState(StateConfig{Root: tr.root, PrefixLen: tr.prefixLen, Errors: history})
			acts := DefaultPolicy().OnNode(e, s)
			if len(acts) != 1 {
				t.Fatalf("actions = %v, want one spawn", acts)
			}
			sp, ok := acts[0].(Spawn)
			if !ok {
				t.Fatalf("action = %T, want Spawn", acts[0])
			}
			if sp.From != c.want {
				t.Errorf("spawn from node %d (off %d), want node %d (off %d)", sp.From.ID, sp.From.Off, c.want.ID, c.want.Off)
			}
			if !strings.Contains(sp.Feedback, "undeclared identifier 'e'") || !strings.Contains(sp.Feedback, "line 6") {
				t.Errorf("feedback %q lacks the diagnostic and its line", sp.Feedback)
			}
		})
	}
}

func TestDefaultPolicyTreatsDifferentErrorAsProgress(t *testing.T) {
	tr, ns := programTree(t)
	old := errorAt(tr, ns[3], 6, "type_mismatch")
	far := errorAt(tr, ns[3], 2, "undeclared_identifier")
	e := errorAt(tr, ns[3], 6, "undeclared_identifier")
	s := NewState(StateConfig{Root: tr.root, Errors: []*Node{old, far, e}})
	sp := DefaultPolicy().OnNode(e, s)[0].(Spawn)
	if sp.From != ns[3] {
		t.Errorf("spawn from node %d, want the node just before the error line (%d): the earlier errors differ", sp.From.ID, ns[3].ID)
	}
}

func TestDefaultPolicyRetriesFailFromWhereItBroke(t *testing.T) {
	tr, ns := programTree(t)
	f1 := tr.add(ns[2], &Node{Kind: NodeFail, Off: ns[2].Off, Text: ns[2].Text})
	s := NewState(StateConfig{Root: tr.root})
	sp := DefaultPolicy().OnNode(f1, s)[0].(Spawn)
	if sp.From != ns[2] {
		t.Errorf("first fail: spawn from %d, want %d", sp.From.ID, ns[2].ID)
	}
	f2 := tr.add(ns[2], &Node{Kind: NodeFail, Off: ns[2].Off, Text: ns[2].Text})
	sp = DefaultPolicy().OnNode(f2, s)[0].(Spawn)
	if sp.From != ns[1] {
		t.Errorf("second fail at the same node: spawn from %d, want %d", sp.From.ID, ns[1].ID)
	}
}

func TestDefaultPolicyIgnoresProgress(t *testing.T) {
	tr, ns := programTree(t)
	if acts := DefaultPolicy().OnNode(ns[1], NewState(StateConfig{Root: tr.root})); len(acts) != 0 {
		t.Errorf("actions on progress = %v, want none", acts)
	}
}
