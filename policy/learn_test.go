package policy

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/hydra-lsp/hydra/engine"
)

// Episodes over one geometry: candidates every 10 bytes from 0 to 90, the error at 100, the
// enclosing declaration from 0 (no scope weighting).
var learnCands = []int{0, 10, 20, 30, 40, 50, 60, 70, 80, 90}

func TestBeliefsLearnFarRootsFromRepairsThatOnlyWorkFromFarBack(t *testing.T) {
	b := PaperBeliefs()
	p := Prior{Decreasing: true}
	for range 40 {
		// Local and mid-way repairs failed; the one from the start worked: the root was far.
		b = b.Update(p, Episode{Cands: learnCands, Err: 100, Failed: []int{90, 50}, Success: 0})
	}
	local, far := b.Masses()
	if far < 0.6 || local > 0.15 {
		t.Errorf("after 40 far episodes: local %.2f far %.2f, want far up from 0.35 and local down from 0.30", local, far)
	}
	if b.Episodes != 40 {
		t.Errorf("episodes = %d", b.Episodes)
	}
}

func TestBeliefsLearnLocalRootsFromFirstTryLocalRepairs(t *testing.T) {
	b := PaperBeliefs()
	for range 40 {
		b = b.Update(Prior{Decreasing: true}, Episode{Cands: learnCands, Err: 100, Success: 90})
	}
	local, far := b.Masses()
	if local < 0.6 || far > 0.2 {
		t.Errorf("after 40 local episodes: local %.2f far %.2f", local, far)
	}
	// Every repair worked at once: q rises from 0.7.
	if q := b.Q(); q <= 0.85 {
		t.Errorf("q = %.2f after 40 first-try successes", q)
	}
}

func TestBeliefsLearnALowQFromRepeatedFailuresAtTheSamePoint(t *testing.T) {
	b := PaperBeliefs()
	for range 40 {
		// Three failures from the start (which precedes every root) before it worked: q is low.
		b = b.Update(Prior{Decreasing: true}, Episode{Cands: learnCands, Err: 100, Failed: []int{0, 0, 0}, Success: 0})
	}
	if q := b.Q(); math.Abs(q-0.25) > 0.05 {
		t.Errorf("q = %.3f; 1 success in 4 attempts from before the root each time: want about 0.25", q)
	}
}

// TestTokPolLearnsWithinASearchAndAcrossSearches: a repair that gets past an error (to a later
// error, or to the end) is an observation; the policy value keeps what it learned for the next
// search, and a policy built with learn=0 learns nothing.
func TestTokPolLearnsWithinASearchAndAcrossSearches(t *testing.T) {
	pol := mustPolicy(t, "tokpol").(*TokPol)
	fixed := mustPolicy(t, "tokpol:learn=0").(*TokPol)
	search := func() {
		// Rollout 1 fails at line 15; rollout 2, from line 14, fails the same way; rollout 3,
		// from the root, gets past it and fails at line 19 (a new error); rollout 4 ends.
		tr, e := failChain(20, nil, []int{14}, "undeclared_identifier")
		tr.spawn(3, tr.root)
		e3 := tr.fail(tr.progress(tr.root, 3, 19), 3, 19, 2, "no_member")
		// The repair from the root rewrote line 2: that is where the root was, far back.
		e3.Text = e3.Text[:lineStart(2)] + "X" + e3.Text[lineStart(2)+1:]
		for _, p := range []*TokPol{pol, fixed} {
			p.OnNode(e, tr.state(e, 100))
			before := p.learnerFor(nil)
			var far0 float64
			if before != nil {
				_, far0 = before.Beliefs().Masses()
			}
			p.OnNode(e3, tr.state(e3, 100))
			if before != nil {
				if _, far := before.Beliefs().Masses(); far <= far0 {
					t.Errorf("a root found only from the start did not raise the far mass: %.3f -> %.3f", far0, far)
				}
			}
		}
		from := nodeAtLine(e3, 18)
		tr.spawn(4, from)
		done := tr.add(tr.progress(from, 4, 20), &engine.Node{Kind: engine.NodeDone, Off: len(tr.text), Line: 20, Rollout: 4})
		for _, p := range []*TokPol{pol, fixed} {
			p.OnNode(done, tr.state(done, 100))
		}
	}
	search()
	b := pol.learner.Beliefs()
	if b.Episodes != 2 {
		t.Fatalf("after one search with two repaired errors: %d episodes learned", b.Episodes)
	}
	search()
	if got := pol.learner.Beliefs().Episodes; got != 4 {
		t.Errorf("after a second search: %d episodes, want 4 (learning carries across searches)", got)
	}
	if fixed.learnerFor(nil) != nil {
		t.Error("learn=0 still learns")
	}
}

func TestModelLearnerKeepsBeliefsPerModelUnderTheCacheDir(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", dir)
	t.Setenv("HOME", dir)
	const model = "test/model-learner:7b"
	learners.Delete(model)
	l := ModelLearner(model)
	if l.Beliefs() != PaperBeliefs() {
		t.Fatalf("a new model starts from %+v", l.Beliefs())
	}
	l.Observe(DefaultPrior(), Episode{Cands: learnCands, Err: 100, Failed: []int{90}, Success: 0})
	if err := l.Err(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "hydra", "tokpol", "test_model-learner_7b.json")
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("beliefs not saved: %v", err)
	}
	if ModelLearner(model) != l {
		t.Error("searches of one process do not share the model's learner")
	}
	learners.Delete(model) // a new process
	if got := ModelLearner(model).Beliefs(); got != l.Beliefs() || got.Episodes != 1 {
		t.Errorf("a new process starts from %+v, want the saved %+v", got, l.Beliefs())
	}
	// The simulated model and the scripted stand-in are never written to disk.
	learners.Delete("hydra-simulated-model")
	s := ModelLearner("hydra-simulated-model")
	s.Observe(DefaultPrior(), Episode{Cands: learnCands, Err: 100, Success: 90})
	if _, err := os.Stat(filepath.Join(dir, "hydra", "tokpol", "hydra-simulated-model.json")); !os.IsNotExist(err) {
		t.Errorf("the simulated model's beliefs were saved: %v", err)
	}
}

// TestBeliefsConvergeToTheTruthOfConstructedHistories: histories drawn from a known truth
// (root local 10%, near 30%, far 60%; a repair from at or before the root works half the time),
// with the attempts an escalating policy makes (the nearest candidate, then half-way, then the
// start until it works), teach beliefs near that truth, from the paper's starting figures.
func TestBeliefsConvergeToTheTruthOfConstructedHistories(t *testing.T) {
	const local, far, q = 0.1, 0.6, 0.5
	for _, located := range []bool{false, true} {
		b := learnFromTruth(local, far, q, located)
		gotLocal, gotFar := b.Masses()
		// Far: a root found only from the start may have been near, unless the episode says
		// where the fix began. Local: the last bucket holds the local spike and the near
		// density's peak, which the episodes cannot tell apart; located episodes split a root
		// there by the prior's shape, so local is only bound to fall from the paper's 0.30.
		farTol, localOK := 0.07, math.Abs(gotLocal-local) <= 0.05
		if located {
			farTol, localOK = 0.03, gotLocal <= local+0.05
		}
		if !localOK || math.Abs(gotFar-far) > farTol || math.Abs(b.Q()-q) > 0.05 {
			t.Errorf("located %v: after 600 episodes from local %.2f far %.2f q %.2f: learned local %.3f far %.3f q %.3f", located, local, far, q, gotLocal, gotFar, b.Q())
		}
		t.Logf("located %v: learned local %.3f far %.3f q %.3f", located, gotLocal, gotFar, b.Q())
	}
}

// TestUnfinishedEpisodesKeepTheHardErrors: with a budget of 4 attempts, histories drawn from the
// same truth leave errors unfinished; dropping them biases q high (and moves the far mass away
// from the truth), learning from their failures keeps both nearer it.
func TestUnfinishedEpisodesKeepTheHardErrors(t *testing.T) {
	const local, far, q = 0.1, 0.6, 0.5
	dropped := learnFromTruthBudget(local, far, q, false, 4, false)
	kept := learnFromTruthBudget(local, far, q, false, 4, true)
	_, farD := dropped.Masses()
	_, farK := kept.Masses()
	if math.Abs(kept.Q()-q) >= math.Abs(dropped.Q()-q) || math.Abs(farK-far) >= math.Abs(farD-far) {
		t.Errorf("unfinished episodes dropped: far %.3f q %.3f; kept: far %.3f q %.3f (truth far %.2f q %.2f)", farD, dropped.Q(), farK, kept.Q(), far, q)
	}
	t.Logf("dropped: far %.3f q %.3f; kept: far %.3f q %.3f", farD, dropped.Q(), farK, kept.Q())
}

// learnFromTruth learns from 600 episodes drawn from the truth (local, far, q); located says
// whether each episode says where the successful repair's text first changed (the root).
func learnFromTruth(local, far, q float64, located bool) Beliefs {
	return learnFromTruthBudget(local, far, q, located, 32, false)
}

// learnFromTruthBudget is learnFromTruth with at most budget repairs an error; an error not
// repaired by then is learned from as unfinished when keep is set, else left out.
func learnFromTruthBudget(local, far, q float64, located bool, budget int, keep bool) Beliefs {
	rng := rand.New(rand.NewPCG(1, 2))
	b := PaperBeliefs()
	p := Prior{Decreasing: true}
	for range 600 {
		var root int // the root's bucket start
		switch u := rng.Float64(); {
		case u < local:
			root = 90
		case u < local+far:
			root = 10 * rng.IntN(5) // [0, 50): at least half-way back
		default:
			root = 50 + 10*rng.IntN(4) // [50, 90)
		}
		ep := Episode{Cands: learnCands, Err: 100}
		if located {
			ep.Changed = root + 3 // the fix begins inside the root's bucket
		}
		ep.Unfinished = true
		for _, a := range append([]int{90, 50}, make([]int, budget-2)...) {
			if a <= root && rng.Float64() < q {
				ep.Success, ep.Unfinished = a, false
				break
			}
			ep.Failed = append(ep.Failed, a)
		}
		if ep.Unfinished && !keep {
			continue
		}
		b = b.Update(p, ep)
	}
	return b
}

// TestBeliefsFileCarriesLearningAcrossRuns: tokpol:beliefs=FILE starts from what an earlier
// run saved there, whatever the model (the simulated one included), and Learned reports both.
func TestBeliefsFileCarriesLearningAcrossRuns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "beliefs.json")
	first := mustPolicy(t, "tokpol:beliefs="+path).(*TokPol)
	first.learner.Observe(DefaultPrior(), Episode{Cands: learnCands, Err: 100, Failed: []int{90, 50}, Success: 0})
	if err := first.learner.Err(); err != nil {
		t.Fatal(err)
	}
	start, now, ok := first.Learned("hydra-simulated-model")
	if !ok || start != PaperBeliefs() || now.Episodes != 1 {
		t.Fatalf("first run: learned %v, start %+v, now %+v", ok, start, now)
	}
	second := mustPolicy(t, "tokpol:beliefs="+path).(*TokPol) // the next run
	if start2, now2, _ := second.Learned("hydra-simulated-model"); start2 != now || now2 != now {
		t.Errorf("the next run starts from %+v, want the saved %+v", start2, now)
	}
	if _, err := ByName("tokpol:beliefs="); err == nil {
		t.Error("tokpol:beliefs= with no file was accepted")
	}
	if _, _, ok := mustPolicy(t, "tokpol:learn=0").(*TokPol).Learned("m"); ok {
		t.Error("learn=0 reports learned beliefs")
	}
}

// TestBeliefsLearnWhereTheRepairChangedTheText: a repair from the start whose text first
// differs from the failed one at the error's own bucket says the root was local, one that
// differs in the first bucket that it was far; without that, a repair from the start says
// nothing about the class.
func TestBeliefsLearnWhereTheRepairChangedTheText(t *testing.T) {
	p := Prior{Decreasing: true}
	base := PaperBeliefs()
	l0, f0 := base.Masses()
	for _, c := range []struct {
		changed      int
		local, far   bool // whether the class mass must rise
		unchangedToo bool
	}{{changed: 100, local: true}, {changed: 5, far: true}, {changed: 0, unchangedToo: true}} {
		b := base
		for range 10 {
			b = b.Update(p, Episode{Cands: learnCands, Err: 100, Success: 0, Changed: c.changed})
		}
		l, f := b.Masses()
		if (c.local && l <= l0+0.1) || (c.far && f <= f0+0.1) || (c.unchangedToo && (math.Abs(l-l0) > 1e-9 || math.Abs(f-f0) > 1e-9)) {
			t.Errorf("changed at %d: local %.3f -> %.3f, far %.3f -> %.3f", c.changed, l0, l, f0, f)
		}
	}
}

// TestTokPolLearnsFromASearchWhoseBudgetRanOut: the failures of an error no repair got past are
// still learned from when the search has no attempt left (an unfinished episode: the root lies
// before the failed points, or the repairs were unlucky), never while attempts remain.
func TestTokPolLearnsFromASearchWhoseBudgetRanOut(t *testing.T) {
	tr, e := failChain(20, nil, []int{14, 10}, "undeclared_identifier") // three rollouts
	pol := mustPolicy(t, "tokpol").(*TokPol)
	pol.OnNode(e, tr.state(e, 8))
	if got := pol.learner.Beliefs().Episodes; got != 0 {
		t.Fatalf("learned %d episodes with attempts left", got)
	}
	pol.OnNode(e, tr.state(e, 3))
	b := pol.learner.Beliefs()
	_, far := b.Masses()
	if _, far0 := PaperBeliefs().Masses(); b.Episodes != 1 || far <= far0 {
		t.Errorf("budget spent after failures from lines 14 and 10: %d episodes, far %.3f (from %.3f)", b.Episodes, far, far0)
	}
	if b.QSucc != PaperBeliefs().QSucc || b.QFail <= PaperBeliefs().QFail {
		t.Errorf("an unfinished episode counted a success or no failure: %+v", b)
	}
}
