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
	if n := len(s.after.lat) + len(s.later.lat); n != lines {
		t.Errorf("after + later = %d samples, want %d", n, lines)
	}
	// The preamble's checkpoint and one every `every` chunks after it.
	if want := 1 + lines/every; len(s.fork) != want {
		t.Errorf("%d checkpoints, want %d (the preamble's and every %d chunks)", len(s.fork), want, every)
	}
}
