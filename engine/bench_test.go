package engine

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hydra-lsp/hydra/checkers"
	"github.com/hydra-lsp/hydra/engine/model/modeltest"
)

// Benchmarks of the engine with the real Clang checker and the scripted stand-in model. They
// print ratios (go test -run '^$' -bench . ./engine/); no test asserts on time.

const bitsPrefix = "#include <bits/stdc++.h>\nusing namespace std;\n\nint add(int a, int b) {\n"

// BenchmarkPreambleColdVsWarm: time from the start of a search to its first checked line with
// <bits/stdc++.h>, parsing the preamble (cold) vs resuming a prewarmed checkpoint (warm).
func BenchmarkPreambleColdVsWarm(b *testing.B) {
	srv := modeltest.NewServer(b, modeltest.Script{Rules: []modeltest.Rule{{Text: "  return a + b;\n}\n", Chunk: 4}}})
	ck := newChecker(b)
	gen := newClient(b, srv.URL)
	req := Request{Prefix: bitsPrefix, Filename: "bits.cc", Flags: []string{"-std=c++17"}, Model: "m"}
	var cold, warm time.Duration
	for i := 0; i < b.N; i++ {
		res, err := Search(context.Background(), ck, gen, req)
		if err != nil || !res.OK {
			b.Fatalf("cold: %v %+v", err, res)
		}
		cold += res.Stats.TimeToFirstCheck
		cp, err := Prewarm(context.Background(), ck, checkers.SessionOptions{Filename: req.Filename, Flags: req.Flags}, req.Prefix)
		if err != nil || cp == nil {
			b.Fatalf("prewarm: %v", err)
		}
		res, err = Search(context.Background(), ck, gen, req)
		cp.Release()
		if err != nil || !res.OK {
			b.Fatalf("warm: %v %+v", err, res)
		}
		warm += res.Stats.TimeToFirstCheck
	}
	b.ReportMetric(float64(cold.Milliseconds())/float64(b.N), "cold-ms")
	b.ReportMetric(float64(warm.Microseconds())/1000/float64(b.N), "warm-ms")
	b.ReportMetric(float64(cold)/float64(max(warm, 1)), "cold/warm")
}

// BenchmarkAsyncVsLockstep: a stand-in streaming at 2 ms per piece; the asynchronous search
// never waits for the checker, the lockstep one waits after every line.
func BenchmarkAsyncVsLockstep(b *testing.B) {
	r := modeltest.Rule{Text: sumBad[:len(sumBad)-len("  return summ;\n}\n")] + "  return sum;\n}\n", Chunk: 3, DelayMS: 2}
	srv := modeltest.NewServer(b, modeltest.Script{Rules: []modeltest.Rule{r}})
	ck := newChecker(b)
	gen := newClient(b, srv.URL)
	var wall [2]time.Duration
	var wait [2]time.Duration
	for i := 0; i < b.N; i++ {
		for k, pol := range []Policy{DefaultPolicy(), lockstep{DefaultPolicy()}} {
			res, err := Search(context.Background(), ck, gen, Request{Prefix: sumPrefix, Filename: "s.cc", Model: "m", Policy: pol})
			if err != nil || !res.OK {
				b.Fatalf("%v %+v", err, res)
			}
			wall[k] += res.Stats.Wall
			wait[k] += res.Stats.ModelWaitOnChecker
		}
	}
	b.ReportMetric(float64(wait[0].Microseconds())/1000/float64(b.N), "async-wait-ms")
	b.ReportMetric(float64(wait[1].Microseconds())/1000/float64(b.N), "lockstep-wait-ms")
	b.ReportMetric(float64(wall[1])/float64(wall[0]), "lockstep/async-wall")
}

// BenchmarkCheckerRollback: bytes the checker re-checks for a repair, resuming the nearest
// checkpoint, against re-checking the whole text up to the rollback point from scratch.
func BenchmarkCheckerRollback(b *testing.B) {
	srv := modeltest.NewServer(b, modeltest.Script{Rules: []modeltest.Rule{
		{PromptContains: FeedbackMarker, Text: sumFix, Chunk: 3},
		{Text: sumBad, Chunk: 3},
	}})
	ck := newChecker(b)
	gen := newClient(b, srv.URL)
	var resub, scratch int
	for i := 0; i < b.N; i++ {
		res, err := Search(context.Background(), ck, gen, Request{Prefix: bitsPrefix + "}\n" + sumPrefix[len("#include <vector>\n#include <string>\n#include <map>\n"):], Filename: "s.cc", Model: "m", CheckpointLines: -1})
		if err != nil || !res.OK {
			b.Fatalf("%v %+v", err, res)
		}
		resub += res.Stats.ResubmittedBytes
		scratch += res.Trace.Nodes[res.Trace.Rollouts[1].Start].Off
	}
	b.ReportMetric(float64(resub)/float64(b.N), "resubmitted-bytes")
	b.ReportMetric(float64(scratch)/float64(b.N), "from-scratch-bytes")
}

// bigFile returns a C++ file of n small functions (8 lines each, over the standard containers)
// after a few #includes, split at the body of function cut: the prefix ends with its signature
// line, body is its body with the closing brace, suffix is everything after.
func bigFile(n, cut int) (prefix, body, suffix string) {
	var pre, suf strings.Builder
	pre.WriteString("#include <algorithm>\n#include <map>\n#include <string>\n#include <vector>\n\n")
	for i := range n {
		sig := fmt.Sprintf("int f%d(const std::vector<int>& v) {\n", i)
		b := fmt.Sprintf("  int s = 0;\n  for (int x : v) s += x * %d;\n  std::map<std::string, int> m;\n  m[\"k\"] = s;\n  return std::max(m[\"k\"], %d);\n}\n\n", i, i)
		switch {
		case i < cut:
			pre.WriteString(sig + b)
		case i == cut:
			pre.WriteString(sig)
			body = b[:len(b)-1]
			suf.WriteString("\n")
		default:
			suf.WriteString(sig + b)
		}
	}
	return pre.String(), body, suf.String()
}

// bigFileRepair scripts the stand-in model for a body of bigFile: the first attempt names an
// undeclared variable on its first line, the repair (prompted with feedback) writes body.
func bigFileRepair(body string) modeltest.Script {
	bad := strings.Replace(body, "int s = 0;", "int s = total;", 1)
	return modeltest.Script{Rules: []modeltest.Rule{
		{PromptContains: FeedbackMarker, Text: body, Chunk: 4},
		{Text: bad, Chunk: 4},
	}}
}

// BenchmarkFinalCheck: a repaired generation near the top of a 2,400-line file (the first
// attempt's first line names an undeclared variable). Once the repair is generated, the search checks the
// suffix in the session that checked the accepted text (it never re-checks the prefix);
// final-ms is the time from the last checked generated line to the verdict on the whole file,
// first-check-ms the time to the first checked generated line (Stats.TimeToFirstCheck), wall-ms the
// whole search; whole-file-ms is the same file checked whole in a fresh session (what the final
// check cost when it started again from scratch), whole/final the ratio, in the same run.
// docs/checker-benchmark.md registers the figure (final-check).
func BenchmarkFinalCheck(b *testing.B) {
	prefix, body, suffix := bigFile(300, 5)
	srv := modeltest.NewServer(b, bigFileRepair(body))
	ck := newChecker(b)
	gen := newClient(b, srv.URL)
	req := Request{Prefix: prefix, Suffix: suffix, Filename: "big.cc", Flags: []string{"-std=c++17"}, Model: "m", StopAtClose: true}
	var final, first, wall time.Duration
	for i := 0; i < b.N; i++ {
		res, err := Search(context.Background(), ck, gen, req)
		if err != nil || !res.OK || res.Text != body || res.Stats.Attempts != 2 {
			b.Fatalf("search: %v %+v", err, res)
		}
		var lastGen, done float64
		for _, n := range res.Trace.Nodes {
			switch {
			case n.Kind == "progress" && n.Rollout == 1:
				lastGen = max(lastGen, n.AtMS)
			case n.Kind == "done":
				done = n.AtMS
			}
		}
		final += time.Duration((done - lastGen) * float64(time.Millisecond))
		first += res.Stats.TimeToFirstCheck
		wall += res.Stats.Wall
	}
	// What the final check cost before it went on from the checkpoint: the whole file checked
	// again in a fresh session (CheckText, as the baseline does), measured in this same run.
	var whole time.Duration
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		errs, err := CheckText(context.Background(), ck, checkers.SessionOptions{Flags: req.Flags, Filename: req.Filename}, prefix+body+suffix)
		if err != nil || len(errs) != 0 {
			b.Fatalf("whole-file check: %v %v", err, errs)
		}
		whole += time.Since(t0)
	}
	lines := strings.Count(prefix+body+suffix, "\n")
	b.ReportMetric(float64(lines), "file-lines")
	b.ReportMetric(float64(whole.Milliseconds())/float64(b.N), "whole-file-ms")
	b.ReportMetric(float64(whole)/float64(max(final, 1)), "whole/final")
	b.ReportMetric(float64(final.Milliseconds())/float64(b.N), "final-ms")
	b.ReportMetric(float64(first.Milliseconds())/float64(b.N), "first-check-ms")
	b.ReportMetric(float64(wall.Milliseconds())/float64(b.N), "wall-ms")
	b.ReportMetric(float64(final)/float64(max(wall, 1)), "final/wall")
}
