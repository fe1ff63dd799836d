package policy

import (
	"fmt"
	"math/rand"
	"strings"

	"github.com/hydra-lsp/hydra/engine"
	"github.com/hydra-lsp/hydra/internal/textops"
)

// tree builds search trees by hand for the policy tests. All rollouts write the same program:
// lines of 20 bytes ("line 001 ..........\n"), so line L starts at offset 20·(L−1).
type tree struct {
	text     string
	root     *engine.Node
	nextID   int
	rollouts []*engine.RolloutView
	errors   []*engine.Node
	// declAfter lists the lines whose end closes a top-level declaration.
	declAfter map[int]bool
}

const lineLen = 20

func newTree(lines int, declAfter ...int) *tree {
	var b strings.Builder
	for i := 1; i <= lines; i++ {
		fmt.Fprintf(&b, "line %03d %s\n", i, strings.Repeat(".", lineLen-10))
	}
	t := &tree{text: b.String(), declAfter: map[int]bool{}}
	for _, l := range declAfter {
		t.declAfter[l] = true
	}
	t.root = &engine.Node{ID: 0, Kind: engine.NodeRoot, Off: 0, Line: 1, Rollout: 1}
	t.rollouts = []*engine.RolloutView{{ID: 1, Start: t.root, Head: t.root, Live: true}}
	t.nextID = 1
	return t
}

// newTreeOf is newTree over the given source lines (each at most 19 bytes, padded to 20 with
// spaces) instead of the filler lines.
func newTreeOf(src []string, declAfter ...int) *tree {
	t := newTree(len(src), declAfter...)
	var b strings.Builder
	for _, l := range src {
		if len(l) >= lineLen {
			panic(fmt.Sprintf("line %q is longer than %d bytes", l, lineLen-1))
		}
		fmt.Fprintf(&b, "%-*s\n", lineLen-1, l)
	}
	t.text = b.String()
	return t
}

func lineStart(line int) int { return (line - 1) * lineLen }

func (t *tree) add(parent *engine.Node, n *engine.Node) *engine.Node {
	n.ID = t.nextID
	t.nextID++
	n.Parent = parent
	n.Text = t.text[:n.Off]
	parent.Children = append(parent.Children, n)
	t.rollout(n.Rollout).Head = n
	return n
}

func (t *tree) rollout(id int) *engine.RolloutView {
	for _, r := range t.rollouts {
		if r.ID == id {
			return r
		}
	}
	panic(fmt.Sprintf("no rollout %d", id))
}

// spawn starts rollout id from node from.
func (t *tree) spawn(id int, from *engine.Node) {
	t.rollouts = append(t.rollouts, &engine.RolloutView{ID: id, Start: from, Head: from, Live: true})
}

// progress adds, on rollout id after node from, a progress node at the start of each line up
// to and including toLine, and returns the last one.
func (t *tree) progress(from *engine.Node, id, toLine int) *engine.Node {
	n := from
	for l := textops.LineOf(t.text, from.Off) + 1; l <= toLine; l++ {
		cat := "stmt"
		if t.declAfter[l-1] {
			cat = "decl"
		}
		// The engine measures the brace depth through the language seam; the test programs
		// have braces only as code.
		text := t.text[:lineStart(l)]
		depth := strings.Count(text, "{") - strings.Count(text, "}")
		n = t.add(n, &engine.Node{Kind: engine.NodeProgress, Off: lineStart(l), Line: l, Cat: cat, Depth: depth, Rollout: id})
	}
	return n
}

// fail adds an error of category cat on rollout id after node from, at column col of line.
func (t *tree) fail(from *engine.Node, id, line, col int, cat string) *engine.Node {
	e := t.add(from, &engine.Node{Kind: engine.NodeError, Off: lineStart(line) + col, Line: line, Col: col + 1,
		Cat: cat, Diag: "use of undeclared identifier 'x'", Rollout: id})
	t.errors = append(t.errors, e)
	t.rollout(id).Live = false
	return e
}

// state is the State the engine would show for node n.
func (t *tree) state(n *engine.Node, maxAttempts int) *engine.State {
	var active []*engine.RolloutView
	for _, r := range t.rollouts {
		if r.Live {
			active = append(active, r)
		}
	}
	return engine.NewState(engine.StateConfig{
		Root:     t.root,
		Current:  t.rollout(n.Rollout),
		Active:   active,
		Rollouts: t.rollouts,
		Errors:   t.errors,
		Attempts: len(t.rollouts),
		Budget:   engine.Budget{MaxAttempts: maxAttempts},
		Rand:     rand.New(rand.NewSource(7)),
	})
}

// nodeAtLine returns the node on n's path at the start of line (the root for line 1).
func nodeAtLine(n *engine.Node, line int) *engine.Node {
	for x := n; x != nil; x = x.Parent {
		if x.Kind != engine.NodeError && x.Off == lineStart(line) {
			return x
		}
	}
	panic(fmt.Sprintf("no node at line %d", line))
}

// spawned returns the start nodes of the spawns among acts.
func spawned(acts []engine.Action) []*engine.Node {
	var out []*engine.Node
	for _, a := range acts {
		if s, ok := a.(engine.Spawn); ok {
			out = append(out, s.From)
		}
	}
	return out
}

func killed(acts []engine.Action) []int {
	var out []int
	for _, a := range acts {
		if k, ok := a.(engine.Kill); ok {
			out = append(out, k.Rollout)
		}
	}
	return out
}
