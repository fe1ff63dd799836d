package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/hydra-lsp/hydra/checkers/lang"
	"github.com/hydra-lsp/hydra/engine/model"
	"github.com/hydra-lsp/hydra/engine/model/modeltest"
)

const addPrefix = "#include <stdio.h>\n\n// add returns the sum of a and b.\nint add(int a, int b) {\n"

const addBody = "  int s = a + b;\n  return s;\n}\n\nint main(void) {\n  printf(\"%d\\n\", add(1, 2));\n  return 0;\n}\n"

func TestCorrectProgramPassesInOneRollout(t *testing.T) {
	srv := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{rule("", addBody)}})
	ck := newRecorder(newChecker(t))
	res, err := Search(context.Background(), ck, newClient(t, srv.URL), Request{
		Prefix: addPrefix, Filename: "add.c", Flags: []string{"-std=gnu11"}, Model: "m",
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK || res.Reason != "accepted" {
		t.Fatalf("ok=%v reason=%q diagnostics=%v", res.OK, res.Reason, res.Diagnostics)
	}
	if res.Text != addBody {
		t.Errorf("text = %q, want the model's text %q", res.Text, addBody)
	}
	if res.Stats.Attempts != 1 || res.Stats.Rollbacks != 0 || len(srv.Calls()) != 1 {
		t.Errorf("attempts=%d rollbacks=%d calls=%d, want one rollout and no repair", res.Stats.Attempts, res.Stats.Rollbacks, len(srv.Calls()))
	}
	if got := srv.Calls()[0].Prompt; got != addPrefix {
		t.Errorf("prompt = %q, want the prefix", got)
	}
	if len(traceNodes(res, "progress")) < 3 || len(traceNodes(res, "done")) != 1 || len(traceNodes(res, "error")) != 0 {
		t.Errorf("trace = %+v, want progress nodes, one done node and no error", res.Trace.Nodes)
	}
	if res.Stats.OutputTokens <= 0 || res.Stats.TimeToFirstCheck <= 0 {
		t.Errorf("stats = %+v", res.Stats)
	}
	if left := ck.waitGone(); len(left) > 0 {
		t.Errorf("checker processes left after the search: %v", left)
	}
}

// sumPrefix has a preamble worth checkpointing, so that a rollback re-submits far less than it.
const sumPrefix = "#include <vector>\n#include <string>\n#include <map>\n\n// total adds up v.\nint total(const std::vector<int> &v) {\n"

const sumBad = "  int sum = 0;\n" +
	"  for (int x : v) {\n" +
	"    sum += x;\n" +
	"  }\n" +
	"  return summ;\n" + // the error: undeclared identifier
	"}\n"

const sumFix = "  return sum;\n}\n"

func TestErrorRollsBackToPolicyNodeAndRepairs(t *testing.T) {
	srv := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{
		rule(FeedbackMarker, sumFix),
		rule("", sumBad),
	}})
	ck := newRecorder(newChecker(t))
	var updates []Update
	res, err := Search(context.Background(), ck, newClient(t, srv.URL), Request{
		Prefix: sumPrefix, Filename: "sum.cc", Flags: []string{"-std=c++17"}, Model: "m",
		OnUpdate: func(u Update) { updates = append(updates, u) },
	})
	if err != nil {
		t.Fatal(err)
	}
	want := strings.TrimSuffix(sumBad, "  return summ;\n}\n") + sumFix
	if !res.OK || res.Text != want {
		t.Fatalf("ok=%v reason=%s text=%q, want %q (diagnostics %v)", res.OK, res.Reason, res.Text, want, res.Diagnostics)
	}
	if strings.Contains(res.Text, FeedbackMarker) {
		t.Error("the feedback comment leaked into the result")
	}
	calls := srv.Calls()
	if len(calls) != 2 || res.Stats.Attempts != 2 || res.Stats.Rollbacks != 1 {
		t.Fatalf("calls=%d attempts=%d rollbacks=%d, want one repair", len(calls), res.Stats.Attempts, res.Stats.Rollbacks)
	}
	// Generator-side rollback: the repair's prompt is the prefix, the accepted lines before
	// the error line, then the feedback as a comment.
	accepted := sumPrefix + strings.TrimSuffix(sumBad, "  return summ;\n}\n")
	code, fb := StripFeedback(calls[1].Prompt)
	if code != accepted {
		t.Errorf("repair prompt code = %q, want %q", code, accepted)
	}
	if !strings.Contains(fb, "summ") || !strings.HasPrefix(calls[1].Prompt, accepted) {
		t.Errorf("feedback %q does not name the error, or the prompt does not start with the accepted text", fb)
	}
	// The rollback went to the node just before the error line (the policy's choice).
	var errNode, startNode TraceNode
	for _, n := range res.Trace.Nodes {
		if n.Kind == "error" {
			errNode = n
		}
	}
	startNode = res.Trace.Nodes[res.Trace.Rollouts[1].Start]
	if errNode.Kind == "" || startNode.Off != len(accepted) || startNode.ID != errNode.Parent {
		t.Errorf("error node %+v, repair started at %+v; want the repair from the error's parent at offset %d", errNode, startNode, len(accepted))
	}
	if len(res.Stats.RollbackLines) != 1 || res.Stats.RollbackLines[0] != 0 {
		t.Errorf("rollback lines = %v, want [0] (from just before the error line)", res.Stats.RollbackLines)
	}
	// Checker-side rollback: the repair resumed a checkpoint and re-submitted only the text
	// between it and the start node, far less than the prefix.
	if res.Stats.CheckpointResumes < 1 {
		t.Fatalf("no checkpoint resumed: %+v", res.Stats)
	}
	if res.Stats.ResubmittedBytes >= len(sumPrefix) {
		t.Errorf("re-submitted %d bytes, not less than the prefix (%d)", res.Stats.ResubmittedBytes, len(sumPrefix))
	}
	var resumed *recSession
	for _, s := range ck.all() {
		if s.resumed {
			resumed = s
		}
	}
	if resumed == nil {
		t.Fatal("the checker never saw a resumed session")
	}
	var sent int
	for _, sub := range resumed.submitted() {
		sent += len(sub)
	}
	if wantSent := len(accepted) - resumed.fromOff + len(sumFix); sent != wantSent {
		t.Errorf("resumed session got %d bytes, want %d (from the checkpoint at %d on)", sent, wantSent, resumed.fromOff)
	}
	if got := len(accepted) - resumed.fromOff; got != res.Stats.ResubmittedBytes {
		t.Errorf("ResubmittedBytes = %d, the checker saw %d re-submitted", res.Stats.ResubmittedBytes, got)
	}
	kinds := map[string]bool{}
	for _, u := range updates {
		kinds[u.Kind] = true
	}
	for _, k := range []string{"attempt", "accepted", "error", "rollback", "done"} {
		if !kinds[k] {
			t.Errorf("no %q update", k)
		}
	}
	if left := ck.waitGone(); len(left) > 0 {
		t.Errorf("checker processes left after the search: %v", left)
	}
}

// counterBad has an error inside an inline member function: clang parses such bodies only
// at the class's closing brace, so the error arrives after progress past it was reported.
const counterPrefix = "// a counter\n"
const counterHead = "struct Counter {\n"
const counterBad = counterHead +
	"  int get() const { return valu; }\n" +
	"  void add(int d) { value += d; }\n" +
	"  int value = 0;\n" +
	"};\n"
const counterFix = "  int get() const { return value; }\n" +
	"  void add(int d) { value += d; }\n" +
	"  int value = 0;\n" +
	"};\n"

func TestRetroactiveErrorTruncatesTree(t *testing.T) {
	srv := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{
		rule(FeedbackMarker, counterFix),
		rule("", counterBad),
	}})
	ck := newChecker(t)
	var mu sync.Mutex
	var seen []*Node
	pol := policyFunc(func(n *Node, s *State) []Action {
		mu.Lock()
		seen = append(seen, n)
		mu.Unlock()
		return DefaultPolicy().OnNode(n, s)
	})
	res, err := Search(context.Background(), ck, newClient(t, srv.URL), Request{
		Prefix: counterPrefix, Filename: "counter.cc", Model: "m", Policy: pol,
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK || res.Text != counterHead+counterFix {
		t.Fatalf("ok=%v reason=%s text=%q", res.OK, res.Reason, res.Text)
	}
	errOff := len(counterPrefix) + strings.Index(counterBad, "valu;")
	var e *Node
	for _, n := range seen {
		if n.Kind == NodeError {
			e = n
		}
	}
	if e == nil {
		t.Fatal("no error node")
	}
	if e.Off != errOff {
		t.Errorf("error at %d, want %d (inside get's body)", e.Off, errOff)
	}
	// Progress past the error's offset had been reported (the class body lines) before the
	// error came: those nodes were invalidated, and the error hangs at its offset.
	var invalidated int
	for _, n := range seen {
		if n.Kind == NodeProgress && n.Rollout == 0 && n.Off > errOff {
			invalidated++
			if !n.Pruned {
				t.Errorf("progress node %d at %d past the error is not pruned", n.ID, n.Off)
			}
		}
	}
	if invalidated == 0 {
		t.Fatal("no progress was reported past the late error; the test does not exercise retroactive invalidation")
	}
	if e.Parent == nil || e.Parent.Off > errOff || e.Parent.Pruned {
		t.Errorf("error hangs below %+v, want the last live node before offset %d", e.Parent, errOff)
	}
	if e.Parent.Off != len(counterPrefix)+len(counterHead) {
		t.Errorf("error's parent at %d, want the end of the class head line %d", e.Parent.Off, len(counterPrefix)+len(counterHead))
	}
	for _, c := range e.Parent.Children {
		if c.Pruned {
			t.Error("a pruned node is still among the anchor's children")
		}
	}
}

// policyFunc adapts a function to Policy.
type policyFunc func(n *Node, s *State) []Action

func (f policyFunc) OnNode(n *Node, s *State) []Action { return f(n, s) }

func TestModelServerFailures(t *testing.T) {
	t.Run("server down is an infrastructure error", func(t *testing.T) {
		srv := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{rule("", addBody)}})
		url := srv.URL
		srv.Close()
		ck := newRecorder(newChecker(t))
		res, err := Search(context.Background(), ck, newClient(t, url), Request{Prefix: addPrefix, Filename: "add.c", Model: "m"})
		if !errors.Is(err, model.ErrUnavailable) {
			t.Fatalf("err = %v, want ErrUnavailable", err)
		}
		if res == nil || res.OK || res.Reason != "model_unavailable" {
			t.Fatalf("result = %+v, want reason model_unavailable", res)
		}
		if left := ck.waitGone(); len(left) > 0 {
			t.Errorf("checker processes left: %v", left)
		}
	})
	t.Run("HTTP 500 is an infrastructure error", func(t *testing.T) {
		srv := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{{Status: 500, Message: "boom"}}})
		res, err := Search(context.Background(), newChecker(t), newClient(t, srv.URL), Request{Prefix: addPrefix, Filename: "add.c", Model: "m"})
		if !errors.Is(err, model.ErrUnavailable) || res == nil || res.Reason != "model_unavailable" {
			t.Fatalf("err = %v, result %+v; want ErrUnavailable", err, res)
		}
		if len(srv.Calls()) != 2 {
			t.Errorf("%d requests, want 2 (the client's retries)", len(srv.Calls()))
		}
	})
	t.Run("a cut stream is a failed rollout the policy repairs", func(t *testing.T) {
		cut := rule("", addBody)
		cut.Cut, cut.CutAfter, cut.Times = true, 12, 1
		cut.PromptContains, cut.PromptSuffix = "", addPrefix
		srv := modeltest.NewServer(t, modeltest.Script{Rules: append([]modeltest.Rule{cut}, continuations(addPrefix, addBody)...)})
		var failSeen bool
		pol := policyFunc(func(n *Node, s *State) []Action {
			if n.Kind == NodeFail {
				failSeen = true
			}
			return DefaultPolicy().OnNode(n, s)
		})
		res, err := Search(context.Background(), newChecker(t), newClient(t, srv.URL), Request{Prefix: addPrefix, Filename: "add.c", Model: "m", Policy: pol})
		if err != nil {
			t.Fatal(err)
		}
		if !failSeen {
			t.Error("the policy never saw a fail node")
		}
		if !res.OK || res.Stats.Attempts != 2 || res.Trace.Rollouts[0].Outcome != "stream_cut" {
			t.Fatalf("ok=%v attempts=%d rollouts=%+v, want the cut rollout retried and accepted", res.OK, res.Stats.Attempts, res.Trace.Rollouts)
		}
		if !strings.HasSuffix(addPrefix+res.Text, "return 0;\n}\n") {
			t.Errorf("text = %q", res.Text)
		}
	})
}

// TestLongPrefixGoesInMergedPieces: a document's prefix is text at hand, not a stream, so a
// prefix the chunker cuts into more than lang.MaxChunks chunks reaches the checker in merged
// pieces (Clang keeps about 400 bytes per chunk); the generated code is still checked line by
// line and accepted.
func TestLongPrefixGoesInMergedPieces(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 70000; i++ {
		fmt.Fprintf(&b, "int v%d;\n", i)
	}
	prefix := b.String() + "int add(int a, int b) {\n"
	srv := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{rule("", addBody)}})
	ck := newRecorder(newChecker(t))
	res, err := Search(context.Background(), ck, newClient(t, srv.URL), Request{
		Prefix: prefix, Filename: "long.c", Flags: []string{"-std=gnu11", "-Wno-implicit-function-declaration"}, Model: "m",
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK {
		t.Fatalf("reason=%s diagnostics=%v", res.Reason, res.Diagnostics)
	}
	most := 0
	for _, s := range ck.all() {
		most = max(most, len(s.submitted()))
	}
	if most == 0 || most > lang.MaxChunks+strings.Count(addBody, "\n")+1 {
		t.Errorf("a session got %d submits for a prefix of 70,000 chunks, want at most %d plus the generated lines", most, lang.MaxChunks)
	}
	if left := ck.waitGone(); len(left) > 0 {
		t.Errorf("checker processes left after the search: %v", left)
	}
}
