package engine

import (
	"cmp"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hydra-lsp/hydra/checkers"
	"github.com/hydra-lsp/hydra/engine/model/modeltest"
)

func TestCancelLeavesNoCheckerProcess(t *testing.T) {
	// A slow stand-in: the search is cancelled while it streams and checkpoints exist.
	slow := rule("", addBody+strings.Repeat("// more\n", 200))
	slow.DelayMS = 5
	srv := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{slow}})
	base := newChecker(t)
	ck := newRecorder(base)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var once sync.Once
	res, err := Search(ctx, ck, newClient(t, srv.URL), Request{
		Prefix: addPrefix, Filename: "add.c", Model: "m", CheckpointLines: 1,
		OnUpdate: func(u Update) {
			if u.Kind == "accepted" && strings.Count(u.Accepted, "\n") >= 3 {
				once.Do(cancel)
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Reason != "cancelled" || res.OK {
		t.Fatalf("reason = %q ok=%v, want cancelled", res.Reason, res.OK)
	}
	if len(ck.all()) == 0 || len(ck.pids) == 0 {
		t.Fatal("no checker session was recorded; the test did not exercise cleanup")
	}
	if s, c := base.Live(); s != 0 || c != 0 {
		t.Errorf("checker still holds %d sessions and %d checkpoints after the search", s, c)
	}
	if left := ck.waitGone(); len(left) > 0 {
		t.Errorf("checker processes left after cancelling: %v", left)
	}
}

// twoWays is a program whose second line has an error; two repairs start from different nodes.
const twoPrefix = "int main() {\n"
const twoBad = "  int a = 1;\n  int b = 2;\n  return c;\n}\n"
const fromLine = "  int b = 2;\n  return a + b;\n}\n"  // continues after "  int a = 1;\n"
const fromRoot = "  int x = 40;\n  return x + 2;\n}\n" // continues after the prefix

// parallelPolicy repairs the first error from two nodes at once and, once one repair's
// progress passes the error, kills the other (as the parallel-exploration policy does).
func parallelPolicy(mu *sync.Mutex, nodes *[]*Node, maxActive *int) Policy {
	errOff := -1
	return policyFunc(func(n *Node, s *State) []Action {
		mu.Lock()
		defer mu.Unlock()
		*nodes = append(*nodes, n)
		*maxActive = max(*maxActive, len(s.Active()))
		switch {
		case n.Kind == NodeError && n.Rollout == 0:
			errOff = n.Off
			c := s.Candidates(n)
			// c[0] is the root, c[1] the end of "  int a = 1;".
			return []Action{Spawn{From: c[1], Feedback: "from-line"}, Spawn{From: c[0], Feedback: "from-root"}}
		case n.Kind == NodeProgress && n.Rollout > 0 && errOff >= 0 && n.Off > errOff:
			var acts []Action
			for _, r := range s.Active() {
				if r.ID != n.Rollout {
					acts = append(acts, Kill{Rollout: r.ID})
				}
			}
			return acts
		}
		return nil
	})
}

func TestParallelRolloutsFromDifferentNodesDoNotInterfere(t *testing.T) {
	slowLine := modeltest.Rule{PromptContains: "from-line", Text: fromLine, Chunk: 2, DelayMS: 2}
	slowRoot := modeltest.Rule{PromptContains: "from-root", Text: fromRoot, Chunk: 2, DelayMS: 2}
	srv := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{slowLine, slowRoot, rule("", twoBad)}})
	var mu sync.Mutex
	var nodes []*Node
	maxActive := 0
	res, err := Search(context.Background(), newChecker(t), newClient(t, srv.URL), Request{
		Prefix: twoPrefix, Filename: "two.cc", Model: "m", Policy: parallelPolicy(&mu, &nodes, &maxActive),
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK {
		t.Fatalf("not accepted: %s %v", res.Reason, res.Diagnostics)
	}
	if maxActive < 2 {
		t.Errorf("at most %d rollouts were active at once, want 2 in parallel", maxActive)
	}
	full := map[int]string{0: twoPrefix + twoBad, 1: twoPrefix + "  int a = 1;\n" + fromLine, 2: twoPrefix + fromRoot}
	for _, n := range nodes {
		want := full[n.Rollout]
		if !strings.HasPrefix(want, n.Text) || n.Off != len(n.Text) {
			t.Errorf("node %d of rollout %d has text %q, not a prefix of that rollout's own text %q", n.ID, n.Rollout, n.Text, want)
		}
	}
	switch res.Text {
	case full[1][len(twoPrefix):], full[2][len(twoPrefix):]:
	default:
		t.Errorf("accepted text %q is neither repair's whole text", res.Text)
	}
	var killed int
	for _, r := range res.Trace.Rollouts {
		if r.Outcome == "killed" {
			killed++
		}
	}
	if killed != 1 {
		t.Errorf("rollouts %+v: want the other repair killed when one was accepted", res.Trace.Rollouts)
	}
}

func TestTokensNeverWaitForTheCheckerInAsyncMode(t *testing.T) {
	// Every checker event is held back until the model's stream has been read to its end:
	// an asynchronous search must still read the whole stream.
	srv := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{rule("", addBody)}})
	ck := newRecorder(newChecker(t))
	ck.gate = make(chan struct{})
	gen := newStreamWatch(newClient(t, srv.URL))
	go func() {
		select {
		case <-gen.eof:
		case <-time.After(60 * time.Second):
			// Let the search end so that the test reports the failure instead of hanging.
		}
		close(ck.gate)
	}()
	res, err := Search(context.Background(), ck, gen, Request{Prefix: addPrefix, Filename: "add.c", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK {
		t.Fatalf("not accepted: %s", res.Reason)
	}
	// The first progress event was delivered only after the stream ended.
	first := int64(-1)
	for _, s := range ck.all() {
		s.mu.Lock()
		if len(s.progress) > 0 && (first < 0 || s.progress[0].seq < first) {
			first = s.progress[0].seq
		}
		s.mu.Unlock()
	}
	w := gen.streams[0]
	last := w.toks[len(w.toks)-1].seq
	if first < 0 || last > first {
		t.Errorf("the last token (seq %d) was read after the first checker event (seq %d): streaming waited for the checker", last, first)
	}
	if res.Stats.ModelWaitOnChecker != 0 {
		t.Errorf("ModelWaitOnChecker = %v, want 0 in async mode", res.Stats.ModelWaitOnChecker)
	}
}

// lockstep runs the default policy in Lockstep mode.
type lockstep struct{ Policy }

func (lockstep) Mode() Mode { return Lockstep }

func TestLockstepWaitsForTheCheckerAfterEachChunk(t *testing.T) {
	srv := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{rule("", addBody)}})
	ck := newRecorder(newChecker(t))
	gen := newStreamWatch(newClient(t, srv.URL))
	res, err := Search(context.Background(), ck, gen, Request{Prefix: addPrefix, Filename: "add.c", Model: "m",
		Policy: lockstep{DefaultPolicy()}})
	if err != nil || !res.OK {
		t.Fatalf("err=%v res=%+v", err, res)
	}
	// Every token after a complete line was read only after the checker's progress for that
	// line had been delivered.
	var progress []seqOff
	for _, s := range ck.all() {
		progress = append(progress, s.progress...)
	}
	w := gen.streams[0]
	checked := 0
	for _, tk := range w.toks {
		lineEnd := strings.LastIndexByte(addBody[:tk.off], '\n') + 1 // complete lines before this token
		if lineEnd == 0 {
			continue
		}
		need := len(addPrefix) + lineEnd
		ok := false
		for _, p := range progress {
			if p.off >= need && p.seq < tk.seq {
				ok = true
				break
			}
		}
		if !ok {
			t.Fatalf("token at %d was read before the checker reported progress up to %d", tk.off, need)
		}
		checked++
	}
	if checked == 0 {
		t.Fatal("no token followed a complete line")
	}
	if res.Stats.ModelWaitOnChecker <= 0 {
		t.Errorf("ModelWaitOnChecker = %v, want > 0 in lockstep mode", res.Stats.ModelWaitOnChecker)
	}
}

// posthoc runs the default policy in PostHoc mode.
type posthoc struct{ Policy }

func (posthoc) Mode() Mode { return PostHoc }

func TestPostHocChecksWholeTextOnce(t *testing.T) {
	// Post-hoc repair regenerates the whole program from the root.
	sumGood := strings.Replace(sumBad, "summ", "sum", 1)
	srv := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{rule(FeedbackMarker, sumGood), rule("", sumBad)}})
	ck := newRecorder(newChecker(t))
	res, err := Search(context.Background(), ck, newClient(t, srv.URL), Request{Prefix: sumPrefix, Filename: "s.cc", Model: "m",
		Policy: posthoc{DefaultPolicy()}})
	if err != nil {
		t.Fatal(err)
	}
	sessions := ck.all()
	if len(sessions) < 1 {
		t.Fatal("no session")
	}
	if subs := sessions[0].submitted(); len(subs) != 1 || subs[0] != sumPrefix+sumBad {
		t.Errorf("first attempt submitted %q, want the whole text in one chunk", subs)
	}
	if !res.OK || res.Text != sumGood || res.Stats.Attempts != 2 || res.Stats.Rollbacks != 1 {
		t.Errorf("ok=%v text=%q attempts=%d rollbacks=%d, want one whole regeneration", res.OK, res.Text, res.Stats.Attempts, res.Stats.Rollbacks)
	}
	if got := res.Trace.Nodes[res.Trace.Rollouts[1].Start].Kind; got != "root" {
		t.Errorf("post-hoc repair started at a %s node, want the root", got)
	}
}

// unchecked runs without a checker.
type unchecked struct{ Policy }

func (unchecked) Mode() Mode { return Unchecked }

func TestUncheckedTakesTheTextAsGenerated(t *testing.T) {
	srv := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{rule("", sumBad)}})
	res, err := Search(context.Background(), nil, newClient(t, srv.URL), Request{Prefix: sumPrefix, Filename: "s.cc", Model: "m",
		Policy: unchecked{DefaultPolicy()}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK || res.Text != sumBad || res.Reason != "accepted" {
		t.Errorf("ok=%v reason=%s text=%q, want the generated text taken as is", res.OK, res.Reason, res.Text)
	}
	if _, err := Search(context.Background(), nil, newClient(t, srv.URL), Request{Prefix: sumPrefix}); err == nil {
		t.Error("a checked search without a checker did not fail")
	}
}

func TestWholeDocumentModeFeedsSuffixAndStopsAtClose(t *testing.T) {
	prefix := "#include <stdio.h>\n\nint sq(int x) {\n"
	cases := []struct {
		name, suffix, model, want string
		ok                        bool
		attempts                  int
	}{
		{"suffix closes the function", "}\n\nint main(void) { return sq(3) - 9; }\n",
			"  return x * x;\n}\n\nint junk(void) { return 1; }\n" + strings.Repeat("int more;\n", 50),
			"  return x * x;\n", true, 0},
		{"no suffix: the closing line is kept", "",
			"  return x * x;\n}\n\nint junk(void) { return 1; }\n" + strings.Repeat("int more;\n", 50),
			"  return x * x;\n}\n", true, 0},
		{"suffix makes the whole file fail", "}\n\nint main(void) { return sq(3, 4); }\n",
			"  return x * x;\n}\n", "  return x * x;\n", false, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{rule("", c.model)}})
			res, err := Search(context.Background(), newChecker(t), newClient(t, srv.URL), Request{
				Prefix: prefix, Suffix: c.suffix, Filename: "sq.c", Model: "m", StopAtClose: true,
				Budget: Budget{MaxAttempts: cmp.Or(c.attempts, 2)},
			})
			if err != nil {
				t.Fatal(err)
			}
			if res.OK != c.ok || res.Text != c.want {
				t.Fatalf("ok=%v reason=%s text=%q; want ok=%v text=%q (diagnostics %v)", res.OK, res.Reason, res.Text, c.ok, c.want, res.Diagnostics)
			}
			if !c.ok && (len(res.Diagnostics) == 0 || res.Diagnostics[0].Line != 7) {
				t.Errorf("diagnostics = %v, want the suffix's error at line 7", res.Diagnostics)
			}
			if c.ok && res.Stats.OutputTokens >= len(c.model)/3 {
				t.Errorf("billed %d tokens, want the stream closed soon after the construct closed", res.Stats.OutputTokens)
			}
		})
	}
}

func TestSearchEndsWithBestAttemptAndReason(t *testing.T) {
	t.Run("max attempts", func(t *testing.T) {
		srv := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{rule(FeedbackMarker, "  return summ;\n}\n"), rule("", sumBad)}})
		res, err := Search(context.Background(), newChecker(t), newClient(t, srv.URL), Request{Prefix: sumPrefix, Filename: "s.cc", Model: "m",
			Budget: Budget{MaxAttempts: 3}})
		if err != nil {
			t.Fatal(err)
		}
		if res.OK || res.Reason != "max_attempts" || res.Stats.Attempts != 3 {
			t.Fatalf("ok=%v reason=%s attempts=%d", res.OK, res.Reason, res.Stats.Attempts)
		}
		if len(res.Diagnostics) == 0 || !strings.Contains(res.Diagnostics[0].Diag, "summ") || !strings.Contains(res.Text, "return summ;") {
			t.Errorf("best attempt %q with diagnostics %v", res.Text, res.Diagnostics)
		}
		// The default policy escalated: the same error three times goes further back each time.
		if rl := res.Stats.RollbackLines; len(rl) != 2 || rl[1] <= rl[0] {
			t.Errorf("rollback distances %v, want growing", rl)
		}
	})
	t.Run("max tokens", func(t *testing.T) {
		srv := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{rule("", addBody)}})
		res, err := Search(context.Background(), newChecker(t), newClient(t, srv.URL), Request{Prefix: addPrefix, Filename: "add.c", Model: "m",
			Budget: Budget{MaxTokens: 5}})
		if err != nil {
			t.Fatal(err)
		}
		if res.OK || res.Reason != "max_tokens" || res.Stats.OutputTokens > 5 {
			t.Fatalf("ok=%v reason=%s tokens=%d, want at most 5 tokens and no acceptance", res.OK, res.Reason, res.Stats.OutputTokens)
		}
	})
	t.Run("deadline", func(t *testing.T) {
		slow := rule("", addBody)
		slow.FirstDelayMS = 2000
		srv := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{slow}})
		res, err := Search(context.Background(), newChecker(t), newClient(t, srv.URL), Request{Prefix: addPrefix, Filename: "add.c", Model: "m",
			Budget: Budget{Deadline: 100 * time.Millisecond}})
		if err != nil {
			t.Fatal(err)
		}
		if res.OK || res.Reason != "deadline" {
			t.Fatalf("ok=%v reason=%s, want deadline", res.OK, res.Reason)
		}
	})
	t.Run("error in the prefix", func(t *testing.T) {
		srv := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{rule("", "  return 0;\n}\n")}})
		res, err := Search(context.Background(), newChecker(t), newClient(t, srv.URL), Request{Prefix: "int f() { return nope; }\nint main() {\n", Filename: "p.cc", Model: "m"})
		if err != nil {
			t.Fatal(err)
		}
		if res.OK || res.Reason != "prefix_error" || len(res.Diagnostics) != 1 || res.Diagnostics[0].Line != 1 {
			t.Fatalf("ok=%v reason=%s diagnostics=%v, want prefix_error at line 1", res.OK, res.Reason, res.Diagnostics)
		}
		if res.Stats.Attempts != 1 {
			t.Errorf("attempts = %d, want no repair of the prefix", res.Stats.Attempts)
		}
	})
	t.Run("error in the prefix reported late", func(t *testing.T) {
		// The missing ';' is diagnosed only at the next token, after the prefix's progress.
		srv := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{rule("", "int main() {\n  return x;\n}\n")}})
		res, err := Search(context.Background(), newChecker(t), newClient(t, srv.URL), Request{Prefix: "int x = 1\n", Filename: "p.cc", Model: "m"})
		if err != nil {
			t.Fatal(err)
		}
		if res.OK || res.Reason != "prefix_error" || len(res.Diagnostics) != 1 || res.Diagnostics[0].Line != 1 {
			t.Fatalf("ok=%v reason=%s diagnostics=%v, want prefix_error at line 1", res.OK, res.Reason, res.Diagnostics)
		}
		if res.Stats.Attempts > 2 {
			t.Errorf("attempts = %d, want the search to give up on the prefix by the second", res.Stats.Attempts)
		}
	})
}

func TestPrewarmedPreambleIsResumedBySearches(t *testing.T) {
	srv := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{rule("", sumBad), rule(FeedbackMarker, sumFix)}})
	ck := newRecorder(newChecker(t))
	opts := checkers.SessionOptions{Filename: "s.cc", Flags: []string{"-std=c++17"}}
	cp, err := Prewarm(context.Background(), ck, opts, sumPrefix)
	if err != nil {
		t.Fatal(err)
	}
	if cp == nil {
		t.Fatal("no checkpoint for a prefix with a preamble")
	}
	defer cp.Release()
	pre := strings.LastIndex(sumPrefix, "#include <map>\n") + len("#include <map>\n")
	if cp.Off() != pre {
		t.Fatalf("checkpoint at %d, want the preamble's end %d", cp.Off(), pre)
	}
	for i := 0; i < 2; i++ {
		n := len(ck.all())
		res, err := Search(context.Background(), ck, newClient(t, srv.URL), Request{Prefix: sumPrefix, Filename: "s.cc", Flags: []string{"-std=c++17"}, Model: "m", Budget: Budget{MaxAttempts: 1}})
		if err != nil {
			t.Fatal(err)
		}
		first := ck.all()[n]
		if !first.resumed || first.fromOff != pre {
			t.Errorf("search %d: first session resumed=%v from %d, want a resume of the preamble checkpoint at %d", i, first.resumed, first.fromOff, pre)
		}
		if res.Stats.CheckpointResumes < 1 {
			t.Errorf("search %d: stats %+v count no resume", i, res.Stats)
		}
	}
	if _, err := Prewarm(context.Background(), ck, opts, "#include <nosuchheader.h>\nint x;\n"); err == nil {
		t.Error("prewarming a preamble that does not compile gave no error")
	}
}

func TestProcessBudgetQueuesParallelSpawns(t *testing.T) {
	srv := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{
		rule("from-line", fromLine), rule("from-root", fromRoot), rule("", twoBad)}})
	var mu sync.Mutex
	var nodes []*Node
	maxActive := 0
	res, err := Search(context.Background(), newChecker(t), newClient(t, srv.URL), Request{
		Prefix: twoPrefix, Filename: "two.cc", Model: "m", Policy: parallelPolicy(&mu, &nodes, &maxActive),
		Budget: Budget{MaxProcesses: 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK || res.Stats.Attempts < 2 {
		t.Fatalf("ok=%v attempts=%d reason=%s", res.OK, res.Stats.Attempts, res.Reason)
	}
	if maxActive > 1 {
		t.Errorf("%d rollouts ran at once with a budget of one checker process", maxActive)
	}
}

func TestPruneKillsRolloutsInsideAndKeepsTrace(t *testing.T) {
	srv := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{
		rule("again", addBody), {Text: addBody, Chunk: 2, DelayMS: 3}}})
	var pruned *Node
	pol := policyFunc(func(n *Node, s *State) []Action {
		if n.Kind == NodeProgress && n.Rollout == 0 && pruned == nil {
			pruned = n
			return []Action{Prune{Node: n}, Spawn{From: s.Root(), Feedback: "again"}}
		}
		return nil
	})
	res, err := Search(context.Background(), newChecker(t), newClient(t, srv.URL), Request{Prefix: addPrefix, Filename: "add.c", Model: "m", Policy: pol})
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK || res.Stats.Attempts != 2 {
		t.Fatalf("ok=%v attempts=%d", res.OK, res.Stats.Attempts)
	}
	if got := res.Trace.Rollouts[0].Outcome; got != "pruned" {
		t.Errorf("rollout 0 outcome %q, want pruned", got)
	}
	if !pruned.Pruned || !res.Trace.Nodes[pruned.ID].Pruned {
		t.Error("the pruned node is not marked in the tree and the trace")
	}
	for _, c := range pruned.Parent.Children {
		if c == pruned {
			t.Error("the pruned node is still its parent's child")
		}
	}
}

func TestCheckpointBudgetIsKept(t *testing.T) {
	srv := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{rule(FeedbackMarker, sumFix), rule("", sumBad)}})
	most := 0
	var count func(n *Node) int
	count = func(n *Node) int {
		k := 0
		if n.Checkpoint != nil {
			k = 1
		}
		for _, c := range n.Children {
			k += count(c)
		}
		return k
	}
	pol := policyFunc(func(n *Node, s *State) []Action {
		most = max(most, count(s.Root()))
		return DefaultPolicy().OnNode(n, s)
	})
	res, err := Search(context.Background(), newChecker(t), newClient(t, srv.URL), Request{Prefix: sumPrefix, Filename: "s.cc", Model: "m",
		Policy: pol, CheckpointLines: 1, Budget: Budget{MaxCheckpoints: 2}})
	if err != nil || !res.OK {
		t.Fatalf("err=%v res=%+v", err, res)
	}
	if most == 0 || most > 2 {
		t.Errorf("the tree held up to %d checkpoints, want 1..2", most)
	}
}

// TestFinalCheckGoesOnFromTheAcceptedText: after a repair, the session that checks the repaired
// text resumes the checkpoint nearest its start and goes on with the suffix in one piece; no
// session checks the prefix twice, and the repaired session is the one that gives the verdict.
func TestFinalCheckGoesOnFromTheAcceptedText(t *testing.T) {
	prefix, body, suffix := bigFile(40, 3)
	srv := modeltest.NewServer(t, bigFileRepair(body))
	rec := newRecorder(newChecker(t))
	res, err := Search(context.Background(), rec, newClient(t, srv.URL), Request{Prefix: prefix, Suffix: suffix, Filename: "big.cc",
		Flags: []string{"-std=c++17"}, Model: "m", StopAtClose: true})
	if err != nil || !res.OK || res.Text != body || res.Stats.Attempts != 2 {
		t.Fatalf("search: %v %+v", err, res)
	}
	var fresh, resumed []*recSession
	for _, s := range rec.all() {
		if s.resumed {
			resumed = append(resumed, s)
		} else {
			fresh = append(fresh, s)
		}
	}
	if len(fresh) != 1 || len(resumed) != 1 {
		t.Fatalf("%d fresh and %d resumed sessions, want the first attempt's and the repair's", len(fresh), len(resumed))
	}
	subs := resumed[0].submitted()
	if resumed[0].fromOff != len(prefix) {
		t.Errorf("the repair resumed at offset %d, want the end of the prefix %d", resumed[0].fromOff, len(prefix))
	}
	if got := strings.Join(subs, ""); got != body+suffix {
		t.Errorf("the repair's session checked %q…, want the repaired body and the suffix only", got[:min(len(got), 80)])
	}
	if len(subs) == 0 || subs[len(subs)-1] != suffix {
		t.Errorf("the suffix went in %d submissions after the body, want one", len(subs)-strings.Count(body, "\n"))
	}
	// Time to first check is the first verdict on a generated line: the first attempt's error on
	// its first line, which comes after the whole prefix was checked.
	errNodes := traceNodes(res, "error")
	if len(errNodes) != 1 || res.Stats.TimeToFirstCheck <= 0 ||
		float64(res.Stats.TimeToFirstCheck.Microseconds())/1000 > errNodes[0].AtMS {
		t.Errorf("time to first check %v, error node at %v ms: want the first verdict on generated text", res.Stats.TimeToFirstCheck, errNodes)
	}
}
