package engine

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/hydra-lsp/hydra/checkers"
	"github.com/hydra-lsp/hydra/checkers/typescript"
	"github.com/hydra-lsp/hydra/engine/model/modeltest"
)

// nodeLog is the default policy, recording every progress node it is shown.
type nodeLog struct {
	mu    sync.Mutex
	nodes []*Node
}

func (l *nodeLog) OnNode(n *Node, s *State) []Action {
	if n.Kind == NodeProgress {
		l.mu.Lock()
		l.nodes = append(l.nodes, n)
		l.mu.Unlock()
	}
	return DefaultPolicy().OnNode(n, s)
}

// Node.Depth is the brace depth from the start of the checked text, measured through the
// language seam, also for a repair resumed from a checkpoint before its start node (whose
// chunker is fed the text in between again): the body of f is at depth 1 on both attempts,
// and only its closing line ends a top-level declaration. For C++ (Clang) and TypeScript (tsc).
func TestNodeDepthFromTheStartOfTheText(t *testing.T) {
	cases := []struct {
		name, file, prefix, first, repair string
		checker                           func(t *testing.T) checkers.Checker
	}{
		{"C++", "f.cc", "int x = 0;\n",
			"int f(int n) {\n  x = x + n;\n  x = x + y;\n  return x;\n}\n", "  return x;\n}\n",
			func(t *testing.T) checkers.Checker { return newChecker(t) }},
		{"TypeScript", "f.ts", "let x = 0;\n",
			"function f(n: number): number {\n  x = x + n;\n  const s: string = n;\n  return x;\n}\n", "  return x;\n}\n",
			func(t *testing.T) checkers.Checker {
				ck, err := typescript.New(typescript.Options{})
				if err != nil {
					t.Fatalf("TypeScript's compiler is needed (scripts/install-deps.sh): %v", err)
				}
				t.Cleanup(func() { ck.Close() })
				return ck
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{
				rule(FeedbackMarker, c.repair), rule("", c.first)}})
			rec := newRecorder(c.checker(t))
			log := &nodeLog{}
			res, err := Search(context.Background(), rec, newClient(t, srv.URL), Request{
				Prefix: c.prefix, Filename: filepath.Join(t.TempDir(), c.file), Model: "m", Policy: log})
			if err != nil || !res.OK || res.Stats.Attempts != 2 {
				t.Fatalf("search: %v, %+v; want accepted after a repair", err, res)
			}
			sessions := rec.all()
			if len(sessions) < 2 || !strings.HasPrefix(strings.Join(sessions[1].submitted(), ""), "function f(n") &&
				!strings.HasPrefix(strings.Join(sessions[1].submitted(), ""), "int f(int n)") {
				t.Fatalf("the repair did not re-submit f's opening line from an earlier checkpoint (submitted %q)", sessions[len(sessions)-1].submitted())
			}
			inBody, ends := map[int]bool{}, 0
			for _, n := range log.nodes {
				want := strings.Count(n.Text, "{") - strings.Count(n.Text, "}")
				if n.Depth != want {
					t.Errorf("rollout %d, node at line %d (%q): Depth %d, want %d", n.Rollout, n.Line, n.Text[strings.LastIndexByte(n.Text[:len(n.Text)-1], '\n')+1:], n.Depth, want)
				}
				if n.Depth == 1 {
					inBody[n.Rollout] = true
				}
				if n.EndsDecl() && n.Off > len(c.prefix) {
					ends++
					if !strings.HasSuffix(n.Text, "}\n") {
						t.Errorf("rollout %d: a top-level declaration ends at line %d, inside f", n.Rollout, n.Line)
					}
				}
			}
			if !inBody[0] || !inBody[1] || ends == 0 {
				t.Errorf("nodes inside f's body on rollouts %v, %d declaration ends; want both rollouts and one", inBody, ends)
			}
		})
	}
}
