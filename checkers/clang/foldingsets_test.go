package clang

import (
	"context"
	"testing"

	"github.com/hydra-lsp/hydra/checkers"
	"github.com/hydra-lsp/hydra/checkers/agreement"
	"github.com/hydra-lsp/hydra/checkers/chunk"
)

// roomProgram is the corpus program on which a line after the preamble made Clang rehash its
// largest folding sets (ElaboratedTypes, NestedNameSpecifiers, …): every node rewritten, every
// page holding one copied after the preamble checkpoint's fork (docs/checker-benchmark.md).
const roomProgram = "cpp/graph/bidirectional_dijkstra.cpp"

// worstLineFaults streams the program with a checkpoint at the end of its preamble, as the
// engine does, and returns the most page faults the shim took on one chunk after it.
func worstLineFaults(t *testing.T, p agreement.Program, env []string) (int64, string) {
	t.Helper()
	c := newChecker(t, Options{Env: env})
	s, err := c.Start(context.Background(), checkers.SessionOptions{Flags: p.Flags, Filename: p.Base})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	chs := chunk.Split(p.Text, chunk.OptionsForFlags(p.Flags, p.Base))
	afterPreamble := -1
	var worst int64
	var worstLine string
	for i, ch := range chs {
		cp := ch.PreambleEnd
		if err := s.Submit(ch.Text, checkers.SubmitOptions{Cat: ch.Cat, Checkpoint: cp}); err != nil {
			t.Fatalf("Submit: %v", err)
		}
		ev := waitFor(t, s, checkers.KindProgress)
		if ev.Off < ch.End() {
			t.Fatalf("progress at %d, want %d (one event per chunk)", ev.Off, ch.End())
		}
		if cp {
			waitFor(t, s, checkers.KindChkpt)
			afterPreamble = i
		}
		if afterPreamble >= 0 && i > afterPreamble && ev.ShimFaults > worst {
			worst, worstLine = ev.ShimFaults, ch.Text
		}
	}
	if afterPreamble < 0 {
		t.Fatal("no preamble chunk")
	}
	return worst, worstLine
}

// Before its first fork a fresh session gives Clang's folding sets room to grow by half, so that
// the program's first lines after the preamble do not rehash a set whose nodes every checkpoint
// shares. HYDRA_SHIM_NO_GROW_SETS=1 is the shim without it: the same line then copies thousands
// of pages.
func TestRoomInFoldingSetsBeforeTheFirstFork(t *testing.T) {
	var p agreement.Program
	for _, q := range corpusT(t) {
		if q.ID == roomProgram {
			p = q
		}
	}
	if p.ID == "" {
		t.Fatalf("%s is not in the corpus", roomProgram)
	}
	off, offLine := worstLineFaults(t, p, []string{"HYDRA_SHIM_NO_GROW_SETS=1"})
	on, onLine := worstLineFaults(t, p, nil)
	t.Logf("worst line after the preamble: %d page faults without room (%q), %d with (%q)", off, offLine, on, onLine)
	if off < 1500 {
		t.Fatalf("without room the worst line took only %d page faults: no set of this program rehashes after its preamble any more, so this test shows nothing; pick a program that does", off)
	}
	if on*2 > off {
		t.Errorf("with room the worst line still took %d page faults (%d without): the sets were not grown before the fork", on, off)
	}
}
