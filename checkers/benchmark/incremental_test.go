package benchmark

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hydra-lsp/hydra/checkers/agreement"
	"github.com/hydra-lsp/hydra/checkers/clang"
)

// Every chunk after the preamble is a per-line sample, the ones that ask for a checkpoint
// included: the shim sends a chunk's progress event before it forks, so a fork is in no line's
// latency. Streamed through the real checker; it judges no timing.
func TestEveryChunkAfterThePreambleIsAPerLineSample(t *testing.T) {
	ch, err := clang.New(clang.Options{})
	if err != nil {
		t.Fatalf("clang checker: %v", err)
	}
	defer ch.Close()
	var b strings.Builder
	b.WriteString("#include <vector>\n\nint sum(const std::vector<int> &v) {\n  int s = 0;\n")
	for i := 0; i < 30; i++ {
		fmt.Fprintf(&b, "  s += v.size() > %d ? v[%d] : 0;\n", i, i)
	}
	b.WriteString("  return s;\n}\n")
	p := agreement.Program{ID: "test/sum", Base: "sum.cpp", Lang: "c++", Flags: agreement.FlagsFor("c++", "c++17"), Text: b.String()}
	chs, first := codeChunks(p)
	if first == 0 {
		t.Fatalf("the program has no preamble chunk: %d chunks", len(chs))
	}
	const every = 5
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s := &samples{}
	if err := s.measureIncremental(ctx, Config{Checker: ch, CheckpointEvery: every, Log: func(string, ...any) {}}, p); err != nil {
		t.Fatalf("measureIncremental: %v", err)
	}
	lines := len(chs) - first
	if len(s.perLine) != lines {
		t.Errorf("%d per-line samples, want one for each of the %d chunks after the preamble", len(s.perLine), lines)
	}
	after, later := s.nearCheckpoint()
	if n := len(after.lat) + len(later.lat); n != lines {
		t.Errorf("after + later = %d samples, want %d", n, lines)
	}
	// The preamble's checkpoint and one every `every` chunks after it.
	if want := 1 + lines/every; len(s.fork) != want {
		t.Errorf("%d checkpoints, want %d (the preamble's and every %d chunks)", len(s.fork), want, every)
	}
}

// slowest_lines name real lines: each entry's line of the program holds the start of its text,
// the list is slowest first, and it stops at the number asked for. Streamed through the real
// checker; it judges no timing.
func TestSlowestLinesNameTheirLines(t *testing.T) {
	ch, err := clang.New(clang.Options{})
	if err != nil {
		t.Fatalf("clang checker: %v", err)
	}
	defer ch.Close()
	text := "#include <map>\n#include <string>\n\nint count(const std::string &s) {\n" +
		"  std::map<char, int> seen;\n\n  for (char c : s)\n    seen[c]++;\n" +
		"  int n = 0;\n  for (const auto &kv : seen)\n    n += kv.second > 1;\n  return n;\n}\n"
	p := agreement.Program{ID: "test/count", Base: "count.cpp", Lang: "c++", Flags: agreement.FlagsFor("c++", "c++17"), Text: text}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s := &samples{}
	if err := s.measureIncremental(ctx, Config{Checker: ch, CheckpointEvery: 3, Log: func(string, ...any) {}}, p); err != nil {
		t.Fatalf("measureIncremental: %v", err)
	}
	if len(s.lines) != len(s.perLine) || len(s.lines) < 5 {
		t.Fatalf("%d lines described for %d per-line samples", len(s.lines), len(s.perLine))
	}
	progLines := strings.Split(text, "\n")
	for _, l := range s.lines {
		first, _, _ := strings.Cut(l.Text, "\n")
		if l.Line < 1 || l.Line > len(progLines) || !strings.Contains(progLines[l.Line-1], first) {
			t.Errorf("line %d %q: the program's line %d does not hold it", l.Line, l.Text, l.Line)
		}
		if l.Program != p.ID || l.SinceCheckpoint < 1 || l.SinceCheckpoint > 3 {
			t.Errorf("%+v: want program %s and 1-3 chunks since the latest checkpoint", l, p.ID)
		}
	}
	res := summarize(s, nil, 3)
	if len(res.SlowestLines) != 3 {
		t.Fatalf("%d slowest lines, want 3", len(res.SlowestLines))
	}
	if res.SlowestLines[0].MS != res.IncrementalMaxMS {
		t.Errorf("the slowest line took %v ms, the maximum is %v", res.SlowestLines[0].MS, res.IncrementalMaxMS)
	}
	for k := 1; k < 3; k++ {
		if res.SlowestLines[k].MS > res.SlowestLines[k-1].MS {
			t.Errorf("slowest_lines not slowest first: %v", res.SlowestLines)
		}
	}
	if res := summarize(s, nil, 0); res.SlowestLines != nil {
		t.Errorf("asked for none, got %v", res.SlowestLines)
	}
}
