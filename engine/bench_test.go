package engine

import (
	"context"
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
