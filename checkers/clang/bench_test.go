package clang

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/hydra-lsp/hydra/checkers"
	"github.com/hydra-lsp/hydra/checkers/chunk"
	"github.com/hydra-lsp/hydra/internal/stats"
)

// Benchmarks of the checker's own costs (docs/checker-benchmark.md has the figures). They
// report medians and tails with ReportMetric; run them with
//
//	go test -run '^$' -bench . -benchtime 200x ./checkers/clang/

const stdcppPreamble = "#include <bits/stdc++.h>\nusing namespace std;\n"

// bodyLine returns the i-th line of a long, valid C++ function body.
func bodyLine(i int) string {
	switch i % 6 {
	case 0:
		return fmt.Sprintf("  vector<int> v%d(%d, %d);\n", i, i%50+1, i)
	case 1:
		return fmt.Sprintf("  for (int k = 0; k < (int)v%d.size(); ++k) acc += v%d[k] * %d;\n", i-1, i-1, i)
	case 2:
		return fmt.Sprintf("  map<string, int> m%d; m%d[\"k%d\"] = acc %% %d;\n", i, i, i, i+7)
	case 3:
		return fmt.Sprintf("  if (m%d.count(\"k%d\")) acc ^= m%d.begin()->second;\n", i-1, i-1, i-1)
	case 4:
		return fmt.Sprintf("  auto s%d = to_string(acc) + \"x%d\";\n", i, i)
	default:
		return fmt.Sprintf("  acc += (long long)s%d.size() + max(%d, (int)acc %% 97);\n", i-1, i)
	}
}

// waitProgress waits for the progress event at off (or beyond) and returns it.
func waitProgress(b testing.TB, s checkers.Session, off int) checkers.Event {
	for {
		select {
		case ev, ok := <-s.Events():
			if !ok {
				b.Fatalf("session ended before progress at %d", off)
			}
			switch ev.Kind {
			case checkers.KindError, checkers.KindCrash:
				b.Fatalf("unexpected %s: %s", ev.Kind, ev.Diag)
			case checkers.KindProgress:
				if ev.Off >= off {
					return ev
				}
			}
		case <-time.After(hangGuard):
			b.Fatalf("no progress at %d", off)
		}
	}
}

// quantile is the q-quantile of ds in milliseconds, by the one convention of package stats.
func quantile(ds []time.Duration, q float64) float64 {
	ms := make([]float64, len(ds))
	for i, d := range ds {
		ms[i] = float64(d) / float64(time.Millisecond)
	}
	return stats.Quantile(ms, q)
}

// preambleCheckpoint checks the <bits/stdc++.h> preamble plus the opening of main and
// checkpoints there.
func preambleCheckpoint(b testing.TB, c *Checker) (*Checkpoint, time.Duration) {
	s, err := c.StartSession(context.Background(), checkers.SessionOptions{Filename: "bench.cpp", Flags: []string{"-std=c++17"}})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	t0 := time.Now()
	if err := s.Submit(stdcppPreamble, checkers.SubmitOptions{Cat: checkers.BoundaryPreamble, Checkpoint: true}); err != nil {
		b.Fatal(err)
	}
	ev := waitFor(b, s, checkers.KindChkpt)
	cold := time.Since(t0)
	return c.AdoptCheckpoint(ev.ID), cold
}

// Per-line latency after a <bits/stdc++.h> preamble: from Submit of one line to its progress
// event, with the prefix growing by b.N lines (flat means independent of the prefix).
func BenchmarkPerLineAfterStdcppPreamble(b *testing.B) {
	c := newChecker(b, Options{})
	cp, _ := preambleCheckpoint(b, c)
	defer cp.Release()
	s, err := c.ResumeSession(context.Background(), cp)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	off := cp.Off()
	head := "int main() {\n  long long acc = 0;\n"
	if err := s.Submit(head, checkers.SubmitOptions{}); err != nil {
		b.Fatal(err)
	}
	off += len(head)
	waitProgress(b, s, off)
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		l := bodyLine(i)
		off += len(l)
		t0 := time.Now()
		if err := s.Submit(l, checkers.SubmitOptions{Cat: checkers.BoundaryStmt}); err != nil {
			b.Fatal(err)
		}
		waitProgress(b, s, off)
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	half := len(lat) / 2
	b.ReportMetric(quantile(lat, 0.5), "median-ms/line")
	b.ReportMetric(quantile(lat, 0.99), "p99-ms/line")
	if half > 10 {
		b.ReportMetric(quantile(lat[:half], 0.5), "median-first-half-ms")
		b.ReportMetric(quantile(lat[half:], 0.5), "median-second-half-ms")
	}
	// End of input: the end-of-TU work (template instantiation) for the whole program.
	if err := s.Submit("  return (int)(acc & 1);\n}\n", checkers.SubmitOptions{}); err != nil {
		b.Fatal(err)
	}
	t0 := time.Now()
	if err := s.EOS(); err != nil {
		b.Fatal(err)
	}
	if ev := waitFor(b, s, checkers.KindDone); !ev.OK {
		b.Fatal("benchmark program rejected")
	}
	b.ReportMetric(float64(time.Since(t0))/float64(time.Millisecond), "eos-ms")
}

// The fixed cost of a line: the same trivial statement (`x = x + 1;`) b.N times in one function,
// no preamble, no checkpoint, so Clang's own work is as small as it gets and no copy-on-write
// fault follows a fork. The round trip is the floor of a line on this machine (transport, Go
// driver and the shim's per-chunk work); shim-ms is the shim's part of it (the progress
// events' shim_us: entering the chunk, Clang, the callbacks). Sub-benchmarks: the channel's
// bytes through the shared-memory ring (the default) or on the socket alone (SocketOnly), each
// with the readers spinning before they block (the default) and without (Spin: -1).
func BenchmarkFixedCostOfALine(b *testing.B) {
	b.Run("ring", func(b *testing.B) { fixedCostOfALine(b, Options{}) })
	b.Run("socket", func(b *testing.B) { fixedCostOfALine(b, Options{SocketOnly: true}) })
	b.Run("ring-nospin", func(b *testing.B) { fixedCostOfALine(b, Options{Spin: -1}) })
	b.Run("socket-nospin", func(b *testing.B) { fixedCostOfALine(b, Options{SocketOnly: true, Spin: -1}) })
}

func fixedCostOfALine(b *testing.B, opts Options) {
	c := newChecker(b, opts)
	s, err := c.Start(context.Background(), checkers.SessionOptions{Flags: []string{"-xc++", "-std=c++17"}, Filename: "fixed.cpp"})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	head := "int main() {\n  int x = 0;\n"
	if err := s.Submit(head, checkers.SubmitOptions{}); err != nil {
		b.Fatal(err)
	}
	off := len(head)
	waitProgress(b, s, off)
	const line = "  x = x + 1;\n"
	lat := make([]time.Duration, 0, b.N)
	shim := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		off += len(line)
		t0 := time.Now()
		if err := s.Submit(line, checkers.SubmitOptions{Cat: checkers.BoundaryStmt}); err != nil {
			b.Fatal(err)
		}
		ev := waitProgress(b, s, off)
		lat = append(lat, time.Since(t0))
		shim = append(shim, time.Duration(ev.ShimUS)*time.Microsecond)
	}
	b.StopTimer()
	b.ReportMetric(quantile(lat, 0.5), "median-ms/line")
	b.ReportMetric(quantile(lat, 0.9), "p90-ms/line")
	b.ReportMetric(quantile(shim, 0.5), "shim-median-ms")
}

// Fork time of a checkpoint after the <bits/stdc++.h> preamble (measured by the shim around
// fork()), and the private memory of the dormant process right after it.
func BenchmarkCheckpointFork(b *testing.B) {
	c := newChecker(b, Options{})
	cp, _ := preambleCheckpoint(b, c)
	defer cp.Release()
	s, err := c.ResumeSession(context.Background(), cp)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if err := s.Submit("int main() {\n  long long acc = 0;\n", checkers.SubmitOptions{}); err != nil {
		b.Fatal(err)
	}
	var forks []time.Duration
	var kept []*Checkpoint
	var privKB []float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := s.Submit(bodyLine(i), checkers.SubmitOptions{Checkpoint: true}); err != nil {
			b.Fatal(err)
		}
		ev := waitFor(b, s, checkers.KindChkpt)
		k := c.AdoptCheckpoint(ev.ID)
		forks = append(forks, k.ForkTime)
		if kb, err := PrivateKB(k.PID()); err == nil {
			privKB = append(privKB, kb)
		}
		kept = append(kept, k)
	}
	b.StopTimer()
	b.ReportMetric(quantile(forks, 0.5), "fork-median-ms")
	b.ReportMetric(quantile(forks, 0.99), "fork-p99-ms")
	if len(privKB) > 0 {
		slices.Sort(privKB)
		b.ReportMetric(privKB[len(privKB)/2], "dormant-private-kB-at-fork")
	}
	// After all of them exist (and the session moved on), what each dormant one holds.
	var sum float64
	for _, k := range kept {
		kb, _ := PrivateKB(k.PID())
		sum += kb
		k.Release()
	}
	b.ReportMetric(sum/float64(len(kept)), "dormant-private-kB-avg-at-end")
}

// Resume of the preamble checkpoint: to the init event, and to the first checked line (the
// warm preamble); the cold preamble is a fresh session's time to the same point.
func BenchmarkResumeAndWarmPreamble(b *testing.B) {
	c := newChecker(b, Options{})
	cp, cold := preambleCheckpoint(b, c)
	defer cp.Release()
	line := "int main() { vector<int> v{3, 1, 2}; sort(v.begin(), v.end()); return v[0]; }\n"
	var toInit, toLine []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		s, err := c.ResumeSession(context.Background(), cp)
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Submit(line, checkers.SubmitOptions{}); err != nil {
			b.Fatal(err)
		}
		waitFor(b, s, checkers.KindInit)
		toInit = append(toInit, time.Since(t0))
		waitProgress(b, s, cp.Off()+len(line))
		toLine = append(toLine, time.Since(t0))
		s.Close()
	}
	b.StopTimer()
	b.ReportMetric(quantile(toInit, 0.5), "resume-to-init-ms")
	b.ReportMetric(quantile(toLine, 0.5), "warm-preamble-ms")
	b.ReportMetric(float64(cold)/float64(time.Millisecond), "cold-preamble-ms")
}

// corpusCPP returns up to n C++ programs of the shared corpus (../shared/data).
func corpusCPP(b testing.TB, n int) []string {
	root, err := repoRoot()
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(root, "..", "shared", "data", "thealgorithms-corpus.jsonl.gz")
	f, err := os.Open(path)
	if err != nil {
		b.Fatalf("corpus missing (%v): the benchmarks read it in place", err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		b.Fatal(err)
	}
	sc := bufio.NewScanner(zr)
	sc.Buffer(nil, 1<<24)
	var out []string
	for sc.Scan() && len(out) < n {
		var p struct{ Lang, Source string }
		if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
			b.Fatal(err)
		}
		if p.Lang == "c++" {
			out = append(out, p.Source)
		}
	}
	return out
}

// Per-chunk latency on real programs (the corpus's C++ ones, cut by checkers/chunk): from
// Submit of a chunk after the preamble to its progress event. b.N is the number of programs.
func BenchmarkPerLineCorpus(b *testing.B) {
	c := newChecker(b, Options{})
	progs := corpusCPP(b, b.N)
	var lat []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		src := progs[i%len(progs)]
		flags := []string{"-std=c++17"}
		s, err := c.StartSession(context.Background(), checkers.SessionOptions{Filename: "corpus.cpp", Flags: flags})
		if err != nil {
			b.Fatal(err)
		}
		inPreamble := true
		for _, ck := range chunk.Split(src, chunk.OptionsForFlags(flags, "corpus.cpp")) {
			t0 := time.Now()
			if err := s.Submit(ck.Text, checkers.SubmitOptions{Cat: ck.Cat}); err != nil {
				b.Fatal(err)
			}
			waitProgress(b, s, ck.End())
			if !inPreamble {
				lat = append(lat, time.Since(t0))
			}
			if ck.PreambleEnd {
				inPreamble = false
			}
		}
		s.Close()
	}
	b.StopTimer()
	b.ReportMetric(quantile(lat, 0.5), "median-ms/chunk")
	b.ReportMetric(quantile(lat, 0.99), "p99-ms/chunk")
	b.ReportMetric(float64(len(lat))/float64(b.N), "chunks/program")
}
