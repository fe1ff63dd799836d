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

// roomProgramT returns roomProgram from the corpus.
func roomProgramT(t *testing.T) agreement.Program {
	t.Helper()
	for _, q := range corpusT(t) {
		if q.ID == roomProgram {
			return q
		}
	}
	t.Fatalf("%s is not in the corpus", roomProgram)
	return agreement.Program{}
}

// faultsAfterFirstFork streams the program with a checkpoint at the end of its preamble, as the
// engine does, and then one every `every` chunks (0: no more), all of them held; it returns the
// page faults the shim took on each chunk after its first fork, and those chunks' text.
func faultsAfterFirstFork(t *testing.T, p agreement.Program, env []string, every int) (faults []int64, lines []string) {
	t.Helper()
	c := newChecker(t, Options{Env: env})
	s, err := c.Start(context.Background(), checkers.SessionOptions{Flags: p.Flags, Filename: p.Base})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	forked := -1
	for i, ch := range chunk.Split(p.Text, chunk.OptionsForFlags(p.Flags, p.Base)) {
		cp := ch.PreambleEnd || (forked >= 0 && every > 0 && (i-forked)%every == 0)
		if err := s.Submit(ch.Text, checkers.SubmitOptions{Cat: ch.Cat, Checkpoint: cp}); err != nil {
			t.Fatalf("Submit: %v", err)
		}
		ev := waitFor(t, s, checkers.KindProgress)
		if ev.Off < ch.End() {
			t.Fatalf("progress at %d, want %d (one event per chunk)", ev.Off, ch.End())
		}
		if forked >= 0 {
			faults, lines = append(faults, ev.ShimFaults), append(lines, ch.Text)
		}
		if cp {
			waitFor(t, s, checkers.KindChkpt)
			if forked < 0 {
				forked = i
			}
		}
	}
	if forked < 0 {
		t.Fatal("no preamble chunk")
	}
	return faults, lines
}

// worstLineFaults streams the program with a checkpoint at the end of its preamble only and
// returns the most page faults the shim took on one chunk after it, and that chunk's text.
func worstLineFaults(t *testing.T, p agreement.Program, env []string) (int64, string) {
	t.Helper()
	faults, lines := faultsAfterFirstFork(t, p, env, 0)
	var worst int64
	var worstLine string
	for i, f := range faults {
		if f > worst {
			worst, worstLine = f, lines[i]
		}
	}
	return worst, worstLine
}

// Before its first fork a fresh session gives Clang's folding sets room to grow by half, so that
// the program's first lines after the preamble do not rehash a set whose nodes every checkpoint
// shares. HYDRA_SHIM_NO_GROW_SETS=1 is the shim without it: with every bucket head written into
// its bucket (HYDRA_SHIM_PLAIN_FOLDING_SETS=1, as LLVM does), the same line then copies
// thousands of pages. The heads kept beside the table after a fork (shim/foldingset.cpp) avoid
// that rehash too, without the room: a large shared table is never rehashed.
func TestRoomInFoldingSetsBeforeTheFirstFork(t *testing.T) {
	p := roomProgramT(t)
	off, offLine := worstLineFaults(t, p, []string{"HYDRA_SHIM_NO_GROW_SETS=1", "HYDRA_SHIM_PLAIN_FOLDING_SETS=1"})
	on, onLine := worstLineFaults(t, p, []string{"HYDRA_SHIM_PLAIN_FOLDING_SETS=1"})
	beside, besideLine := worstLineFaults(t, p, []string{"HYDRA_SHIM_NO_GROW_SETS=1"})
	t.Logf("worst line after the preamble: %d page faults without room (%q), %d with (%q), %d without room but with the heads beside the table (%q)", off, offLine, on, onLine, beside, besideLine)
	if off < 1500 {
		t.Fatalf("without room the worst line took only %d page faults: no set of this program rehashes after its preamble any more, so this test shows nothing; pick a program that does", off)
	}
	if on*2 > off {
		t.Errorf("with room the worst line still took %d page faults (%d without): the sets were not grown before the fork", on, off)
	}
	if beside*2 > off {
		t.Errorf("with the heads beside the table the worst line still took %d page faults (%d with them in the buckets): a shared table was rehashed", beside, off)
	}
}

// After a checkpoint's fork, a node added to one of Clang's large folding sets has its bucket's
// new head kept beside the table (shim/foldingset.cpp) instead of written into the bucket array,
// whose pages the session shares with its checkpoints. HYDRA_SHIM_PLAIN_FOLDING_SETS=1 is the
// shim without it, writing each head into its bucket as LLVM does: each new type then copies
// another page of the table.
func TestBucketHeadsBesideTheTable(t *testing.T) {
	p := roomProgramT(t)
	sum := func(env []string) (total int64, chunks int) {
		faults, _ := faultsAfterFirstFork(t, p, env, 8)
		for _, f := range faults {
			total += f
		}
		return total, len(faults)
	}
	plain, n := sum([]string{"HYDRA_SHIM_PLAIN_FOLDING_SETS=1"})
	beside, _ := sum(nil)
	t.Logf("%d chunks after the first fork: %d page faults with every head in its bucket, %d with the heads beside the table", n, plain, beside)
	if beside*20 > plain*19 {
		t.Errorf("with the heads beside the table the session took %d page faults after its forks, against %d with them in the buckets: want at least a twentieth fewer", beside, plain)
	}
}
