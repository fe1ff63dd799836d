package policy

import (
	"math"
	"strings"
	"testing"

	"github.com/hydra-lsp/hydra/engine"
	"github.com/hydra-lsp/hydra/internal/textops"
)

func mustPolicy(t *testing.T, name string, opts ...Option) engine.Policy {
	t.Helper()
	p, err := ByName(name, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// one returns the single spawn's start line, failing the test otherwise.
func one(t *testing.T, acts []engine.Action) int {
	t.Helper()
	from := spawned(acts)
	if len(from) != 1 || len(acts) != 1 {
		t.Fatalf("want one spawn, got %#v", acts)
	}
	return textops.LineOf(from[0].Text+"x", from[0].Off)
}

func TestByNameKnowsEveryPolicyAndItsMode(t *testing.T) {
	want := map[string]engine.Mode{
		"tokpol": engine.Async, "local-first": engine.Async, "fixed": engine.Async,
		"posthoc": engine.PostHoc, "unconstrained": engine.Unchecked, "uncertainty": engine.Async,
		"parallel": engine.Async, "random": engine.Async, "lockstep": engine.Lockstep,
	}
	if got := Names(); len(got) != len(want) {
		t.Errorf("Names() = %v, want the %d policies", got, len(want))
	}
	for name, mode := range want {
		p := mustPolicy(t, name)
		got := engine.Async
		if m, ok := p.(engine.Moder); ok {
			got = m.Mode()
		}
		if got != mode {
			t.Errorf("%s: mode %v, want %v", name, got, mode)
		}
		if Summary(name) == "" {
			t.Errorf("%s has no summary", name)
		}
	}
	if _, ok := mustPolicy(t, "").(*TokPol); !ok {
		t.Errorf(`ByName("") is not TokPol`)
	}
}

func TestByNameTakesParametersAfterColons(t *testing.T) {
	p, err := ByName("tokpol:q=0.9:scope=3:local=0.4:far=0.3:decreasing=0")
	if err != nil {
		t.Fatal(err)
	}
	got := p.(*TokPol).opts
	if got.SuccessProb != 0.9 || got.Prior != (Prior{Local: 0.4, Far: 0.3, Decreasing: false, Scope: 3}) {
		t.Errorf("options %+v", got)
	}
	if f, err := ByName("fixed:lines=8"); err != nil || f.(*Fixed).opts.Lines != 8 {
		t.Errorf("fixed:lines=8 → %v, %v", f, err)
	}
	for _, bad := range []string{"tokpol:q=2", "tokpol:q", "tokpol:zeta=1", "fixed:lines=x", "tokpol:lastresort=maybe"} {
		if _, err := ByName(bad); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

func TestByNameRejectsUnknownNamesListingTheKnownOnes(t *testing.T) {
	_, err := ByName("greedy")
	if err == nil {
		t.Fatal("no error for an unknown policy")
	}
	for _, n := range Names() {
		if !strings.Contains(err.Error(), n) {
			t.Errorf("error %q does not list %q", err, n)
		}
	}
}

// failChain builds: rollout 1 writes lines 1..14 and fails at line 15; then each start line
// in retries spawns a new rollout that fails again with the same error. It returns the tree
// and the newest error.
func failChain(lines int, declAfter []int, retries []int, cat string) (*tree, *engine.Node) {
	tr := newTree(lines, declAfter...)
	e := tr.fail(tr.progress(tr.root, 1, 15), 1, 15, 5, cat)
	for i, l := range retries {
		id := i + 2
		from := nodeAtLine(e, l)
		tr.spawn(id, from)
		e = tr.fail(tr.progress(from, id, 15), id, 15, 5, cat)
	}
	return tr, e
}

// paperPrior is the paper's shape alone: local spike, even near and far halves.
var paperPrior = WithPrior(Prior{Local: 0.3, Far: 0.35})

func TestTokPolTriesLocallyFirst(t *testing.T) {
	tr, e := failChain(20, nil, nil, "undeclared_identifier")
	if got := one(t, mustPolicy(t, "tokpol", paperPrior).OnNode(e, tr.state(e, 8))); got != 15 {
		t.Errorf("first repair from line %d, want 15 (local)", got)
	}
	// The default prior puts the near mass close to the error: the first repair stays near.
	if got := one(t, mustPolicy(t, "tokpol").OnNode(e, tr.state(e, 8))); got < 12 || got > 15 {
		t.Errorf("default prior: first repair from line %d, want within 3 lines of 15", got)
	}
}

func TestTokPolMovesBeforeEachFailedAttemptWhenRepairsAlwaysWork(t *testing.T) {
	// A prior with most non-local mass close to the error makes intermediate rollbacks pay.
	p := mustPolicy(t, "tokpol", WithSuccessProb(1), WithPrior(Prior{Local: 0.5, Far: 0.1}))
	var retries []int
	for len(retries) == 0 || retries[len(retries)-1] != 1 {
		if len(retries) > 15 {
			t.Fatalf("no root after failures from %v", retries)
		}
		tr, e := failChain(20, nil, retries, "undeclared_identifier")
		got := one(t, p.OnNode(e, tr.state(e, 100)))
		if len(retries) > 0 && got >= retries[len(retries)-1] {
			t.Fatalf("after failures from lines %v TokPol repairs from line %d, not before them", retries, got)
		}
		retries = append(retries, got)
	}
	if len(retries) < 3 {
		t.Errorf("escalation %v skipped every intermediate point", retries)
	}
	t.Logf("escalation with q=1: lines %v", retries)
}

func TestTokPolGoesToTheRootAfterALocalFailureUnderAUniformBelief(t *testing.T) {
	// With the default prior the non-local mass is uniform over the generated text; costs grow
	// linearly with distance, so once local is ruled out a partial rollback only adds risk.
	tr, e := failChain(20, nil, []int{15}, "undeclared_identifier")
	uniform := WithPrior(Prior{Local: 0.3, Far: 0.35})
	if got := one(t, mustPolicy(t, "tokpol", WithSuccessProb(1), uniform).OnNode(e, tr.state(e, 100))); got != 1 {
		t.Errorf("repair from line %d, want the root", got)
	}
}

func TestTokPolRetriesNearbyWhenRepairsOftenFail(t *testing.T) {
	// With q small a failure says little, so the cheap local candidate stays the best bet.
	tr, e := failChain(20, nil, []int{15}, "undeclared_identifier")
	if got := one(t, mustPolicy(t, "tokpol", paperPrior, WithSuccessProb(0.05)).OnNode(e, tr.state(e, 8))); got != 15 {
		t.Errorf("with q=0.05 TokPol repairs from line %d, want 15 again", got)
	}
	// With q=0.7 the local bucket loses most of its mass and TokPol moves back.
	if got := one(t, mustPolicy(t, "tokpol", paperPrior).OnNode(e, tr.state(e, 8))); got >= 15 {
		t.Errorf("with q=0.7 TokPol repairs from line %d, want before 15", got)
	}
}

func TestTokPolResetsItsBeliefOnADifferentError(t *testing.T) {
	// The repair from line 12 fails with another category: progress, so local first again.
	tr, e := failChain(20, nil, []int{12}, "type_mismatch")
	tr.errors[1].Cat = "no_member"
	if got := one(t, mustPolicy(t, "tokpol", paperPrior).OnNode(e, tr.state(e, 8))); got != 15 {
		t.Errorf("repair of a new error from line %d, want 15", got)
	}
	// The same, when the new error is far from the old one.
	tr2 := newTree(40)
	e1 := tr2.fail(tr2.progress(tr2.root, 1, 15), 1, 15, 5, "syntax")
	from := nodeAtLine(e1, 15)
	tr2.spawn(2, from)
	e2 := tr2.fail(tr2.progress(from, 2, 30), 2, 30, 5, "syntax")
	if got := one(t, mustPolicy(t, "tokpol", paperPrior).OnNode(e2, tr2.state(e2, 8))); got != 30 {
		t.Errorf("repair of an error 15 lines on from line %d, want 30", got)
	}
}

func TestTokPolStepsBackGraduallyUnderADecreasingPrior(t *testing.T) {
	tr, e := failChain(20, nil, []int{15}, "undeclared_identifier")
	p := mustPolicy(t, "tokpol:decreasing=1:scope=1")
	if got := one(t, p.OnNode(e, tr.state(e, 100))); got <= 1 || got >= 15 {
		t.Errorf("after a local failure, a decreasing prior repairs from line %d, want between the root and 15", got)
	}
}

func TestTokPolPrefersAnEarlyRollbackUnderAFarPrior(t *testing.T) {
	tr, e := failChain(20, nil, nil, "undeclared_identifier")
	got := one(t, mustPolicy(t, "tokpol", WithPrior(Prior{Local: 0, Far: 1})).OnNode(e, tr.state(e, 8)))
	if got > 8 {
		t.Errorf("with all mass in the first half TokPol repairs from line %d, want ≤ 8", got)
	}
}

func TestLastAttemptRestartsFromTheRoot(t *testing.T) {
	tr, e := failChain(20, nil, nil, "undeclared_identifier") // 1 attempt so far, 2 allowed
	for _, name := range []string{"tokpol", "local-first", "fixed", "uncertainty", "random"} {
		if got := one(t, mustPolicy(t, name).OnNode(e, tr.state(e, 2))); got != 1 {
			t.Errorf("%s: last attempt from line %d, want the root", name, got)
		}
		if got := one(t, mustPolicy(t, name, WithoutLastResort()).OnNode(e, tr.state(e, 2))); got == 1 && name != "random" {
			t.Errorf("%s without last resort still goes to the root", name)
		}
	}
}

func TestLocalFirstEscalatesThroughDeclarations(t *testing.T) {
	decls := []int{4, 9} // declarations end after lines 4 and 9: they start at lines 5 and 10
	tests := []struct {
		retries []int
		want    int
	}{
		{nil, 15},
		{[]int{15}, 10},
		{[]int{15, 10}, 5},
		{[]int{15, 10, 5}, 1},
		{[]int{15, 10, 5, 1}, 1},
	}
	for _, tc := range tests {
		tr, e := failChain(20, decls, tc.retries, "undeclared_identifier")
		if got := one(t, mustPolicy(t, "local-first").OnNode(e, tr.state(e, 100))); got != tc.want {
			t.Errorf("after failures from %v: line %d, want %d", tc.retries, got, tc.want)
		}
	}
}

// inBody is a program whose error (line 15) lies inside the function that starts at line 3,
// with every statement of the body labelled decl (as a chunker that counted braces from a
// rollout's start inside the function would label them): only the nodes' Depth, the engine's
// measure from the start of the text, tells they are inside it.
func inBody(retries []int) (*tree, *engine.Node) {
	src := []string{"int x = 0;", "int y = 1;", "int f(int n) {"}
	for len(src) < 20 {
		src = append(src, "  x = x + n;")
	}
	src[19] = "}"
	decl := []int{1, 2}
	for l := 4; l <= 19; l++ {
		decl = append(decl, l) // mislabelled: inside f's body
	}
	tr := newTreeOf(src, decl...)
	e := tr.fail(tr.progress(tr.root, 1, 15), 1, 15, 5, "undeclared_identifier")
	for i, l := range retries {
		id := i + 2
		from := nodeAtLine(e, l)
		tr.spawn(id, from)
		e = tr.fail(tr.progress(from, id, 15), id, 15, 5, "undeclared_identifier")
	}
	return tr, e
}

func TestDeclarationStartsAreMeasuredNotTakenFromTheCategory(t *testing.T) {
	tests := []struct {
		retries []int
		want    int
	}{
		{[]int{15}, 3}, // the start of f, not the previous statement (line 14)
		{[]int{15, 3}, 2},
		{[]int{15, 3, 2}, 1},
	}
	for _, tc := range tests {
		tr, e := inBody(tc.retries)
		if got := one(t, mustPolicy(t, "local-first").OnNode(e, tr.state(e, 100))); got != tc.want {
			t.Errorf("local-first after failures from %v: line %d, want %d", tc.retries, got, tc.want)
		}
	}
	// TokPol weighs the enclosing declaration, f from line 3, not the last statement.
	tr, e := inBody(nil)
	p := mustPolicy(t, "tokpol").(*TokPol)
	st := tr.state(e, 100)
	b := p.Belief(st, e, st.Candidates(e))
	want := PriorMass(DefaultPrior(), b.Offsets, e.Off, lineStart(3))
	for i := range want {
		if math.Abs(b.Prior[i]-want[i]) > 1e-12 {
			t.Fatalf("prior %v, want the one scoped to line 3 %v", b.Prior, want)
		}
	}
}

func TestFixedRollsBackNLinesEachTime(t *testing.T) {
	tests := []struct {
		retries []int
		want    int
	}{
		{nil, 10},
		{[]int{10}, 5},
		{[]int{10, 5}, 1},
	}
	for _, tc := range tests {
		tr, e := failChain(20, nil, tc.retries, "undeclared_identifier")
		if got := one(t, mustPolicy(t, "fixed").OnNode(e, tr.state(e, 100))); got != tc.want {
			t.Errorf("after failures from %v: line %d, want %d", tc.retries, got, tc.want)
		}
	}
	tr, e := failChain(20, nil, nil, "undeclared_identifier")
	if got := one(t, mustPolicy(t, "fixed", WithLines(2)).OnNode(e, tr.state(e, 100))); got != 13 {
		t.Errorf("2 lines back: line %d, want 13", got)
	}
}

func TestLockstepOnlyRepairsTheCurrentLine(t *testing.T) {
	tr, e := failChain(20, nil, []int{15, 15, 15}, "undeclared_identifier")
	if got := one(t, mustPolicy(t, "lockstep").OnNode(e, tr.state(e, 3))); got != 15 {
		t.Errorf("lockstep repairs from line %d, want 15", got)
	}
}

func TestPostHocRegeneratesEverythingOncePerFailedProgram(t *testing.T) {
	tr, e := failChain(20, nil, nil, "undeclared_identifier")
	p := mustPolicy(t, "posthoc")
	acts := p.OnNode(e, tr.state(e, 8))
	if got := one(t, acts); got != 1 || spawned(acts)[0] != tr.root {
		t.Errorf("post-hoc repairs from line %d, want the root", got)
	}
	if fb := acts[0].(engine.Spawn).Feedback; !strings.Contains(fb, "use of undeclared identifier 'x'") || !strings.Contains(fb, "line 15") {
		t.Errorf("feedback %q lacks the compiler's message and line", fb)
	}
	// A second error of the same program is not a second repair.
	e2 := tr.fail(e.Parent, 1, 17, 0, "syntax")
	if acts := p.OnNode(e2, tr.state(e2, 8)); len(acts) != 0 {
		t.Errorf("second error of one program: %v, want no action", acts)
	}
	// Progress nodes need nothing.
	if acts := p.OnNode(e.Parent, tr.state(e.Parent, 8)); len(acts) != 0 {
		t.Errorf("progress: %v, want no action", acts)
	}
}

func TestUnconstrainedNeverActs(t *testing.T) {
	tr, e := failChain(20, nil, nil, "undeclared_identifier")
	if acts := mustPolicy(t, "unconstrained").OnNode(e, tr.state(e, 8)); len(acts) != 0 {
		t.Errorf("unconstrained acted: %v", acts)
	}
}

func TestRandomPicksAmongTheCandidates(t *testing.T) {
	tr, e := failChain(20, nil, nil, "undeclared_identifier")
	p := mustPolicy(t, "random")
	s := tr.state(e, 100) // one State: its seeded source advances across calls
	seen := map[int]bool{}
	for i := 0; i < 50; i++ {
		l := one(t, p.OnNode(e, s))
		if l < 1 || l > 15 {
			t.Fatalf("random repair from line %d, outside the candidates", l)
		}
		seen[l] = true
	}
	if len(seen) < 5 {
		t.Errorf("50 random picks hit only %d distinct lines", len(seen))
	}
}

func TestUncertaintyRollsBackBeforeTheLeastCertainToken(t *testing.T) {
	tr, e := failChain(20, nil, nil, "undeclared_identifier")
	var toks []engine.TokenInfo
	for off := 0; off < e.Off; off += 5 {
		toks = append(toks, engine.TokenInfo{Off: off, Text: tr.text[off : off+5], Logprob: -0.1, Entropy: 0.2})
	}
	toks[lineStart(8)/5+2].Entropy = 3.0  // inside line 8: a flat distribution
	toks[lineStart(3)/5+1].Logprob = -2.0 // inside line 3: an unlikely token
	tr.rollout(1).Tokens = toks
	p := mustPolicy(t, "uncertainty")
	if got := one(t, p.OnNode(e, tr.state(e, 100))); got != 8 {
		t.Errorf("repair from line %d, want 8 (before the entropy peak)", got)
	}
	// The repair from line 8 fails the same way: look only before line 8.
	from := nodeAtLine(e, 8)
	tr.spawn(2, from)
	e2 := tr.fail(tr.progress(from, 2, 15), 2, 15, 5, "undeclared_identifier")
	if got := one(t, p.OnNode(e2, tr.state(e2, 100))); got != 3 {
		t.Errorf("second repair from line %d, want 3", got)
	}
}

func TestUncertaintyFallsBackToLocalFirstWithoutLogprobs(t *testing.T) {
	tr, e := failChain(20, nil, nil, "undeclared_identifier")
	tr.rollout(1).Tokens = []engine.TokenInfo{{Off: 0, Text: "line"}, {Off: 100, Text: "line"}}
	if got := one(t, mustPolicy(t, "uncertainty").OnNode(e, tr.state(e, 100))); got != 15 {
		t.Errorf("without logprobs: line %d, want 15 (local-first)", got)
	}
}

func TestParallelExploresSeveralPointsAndKeepsTheFirstThatPasses(t *testing.T) {
	tr, e := failChain(25, nil, nil, "undeclared_identifier")
	p := mustPolicy(t, "parallel")
	acts := p.OnNode(e, tr.state(e, 100))
	var lines []int
	for _, n := range spawned(acts) {
		lines = append(lines, textops.LineOf(tr.text, n.Off))
	}
	if len(lines) != 3 || lines[0] != 15 || lines[2] != 1 || lines[1] <= 1 || lines[1] >= 15 {
		t.Fatalf("parallel spawned from lines %v, want nearest, middle, root", lines)
	}
	// Rollouts 2, 3, 4 run from those points.
	for i, n := range spawned(acts) {
		tr.spawn(i+2, n)
	}
	// Rollout 3 (middle) reports progress that does not reach the error yet: nothing happens.
	mid := spawned(acts)[1]
	n3 := tr.progress(mid, 3, 14)
	if acts := p.OnNode(n3, tr.state(n3, 100)); len(acts) != 0 {
		t.Errorf("progress before the error: %v, want nothing", acts)
	}
	// Rollout 2 (local) fails the same way while the others run: wait for them.
	e2 := tr.fail(tr.progress(spawned(acts)[0], 2, 15), 2, 15, 5, "undeclared_identifier")
	if acts := p.OnNode(e2, tr.state(e2, 100)); len(acts) != 0 {
		t.Errorf("sibling failed while others run: %v, want nothing", acts)
	}
	// Rollout 3 gets well past the error: rollout 4 is killed.
	n3 = tr.progress(n3, 3, 20)
	got := killed(p.OnNode(n3, tr.state(n3, 100)))
	if len(got) != 1 || got[0] != 4 {
		t.Errorf("killed %v, want [4]", got)
	}
}

func TestParallelStartsANewGroupBeforeTheFailedOnes(t *testing.T) {
	tr, e := failChain(20, nil, []int{15, 8}, "undeclared_identifier")
	// The repairs from lines 15 and 8 failed the same way and none is live.
	from := spawned(mustPolicy(t, "parallel").OnNode(e, tr.state(e, 100)))
	if len(from) != 3 || from[len(from)-1] != tr.root {
		t.Fatalf("new group from %d points, want 3 ending at the root", len(from))
	}
	for _, n := range from {
		if n.Off >= lineStart(8) {
			t.Errorf("new group explores line %d, not before the failed line 8", textops.LineOf(tr.text, n.Off))
		}
	}
}

func TestFailedStreamIsRetriedFromItsLastAcceptedNode(t *testing.T) {
	tr := newTree(20)
	last := tr.progress(tr.root, 1, 7)
	f := tr.add(last, &engine.Node{Kind: engine.NodeFail, Off: last.Off, Rollout: 1})
	for _, name := range []string{"tokpol", "local-first", "fixed", "uncertainty", "random", "lockstep", "parallel"} {
		if got := spawned(mustPolicy(t, name).OnNode(f, tr.state(f, 8))); len(got) != 1 || got[0] != last {
			t.Errorf("%s: after a cut stream spawns %v, want one from line 7", name, got)
		}
	}
}

func TestProgressAloneNeverTriggersARepair(t *testing.T) {
	tr := newTree(20)
	n := tr.progress(tr.root, 1, 7)
	for _, name := range Names() {
		if acts := mustPolicy(t, name).OnNode(n, tr.state(n, 8)); len(acts) != 0 {
			t.Errorf("%s acted on progress: %v", name, acts)
		}
	}
}
