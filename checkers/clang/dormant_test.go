package clang

import (
	"context"
	"testing"

	"github.com/hydra-lsp/hydra/checkers"
	"github.com/hydra-lsp/hydra/checkers/chunk"
)

// privateKBByMapping returns the private memory (clean + dirty, kB) of pid: all of it, and the
// part in its [stack] mapping.
func privateKBByMapping(t *testing.T, pid int) (all, stack float64) {
	t.Helper()
	for _, m := range smapsOf(t, pid) {
		kb := m.kB["Private_Clean"] + m.kB["Private_Dirty"]
		all += kb
		if m.name == "[stack]" {
			stack += kb
		}
	}
	return all, stack
}

// dormantKB streams the named corpus programs with a checkpoint at the end of each preamble and
// then every 25 chunks (as hydra bench checker does) and returns, summed over the checkpoints at
// the end, their private memory and the part of it in their stacks, and how many there were.
func dormantKB(t *testing.T, ids []string, env []string) (all, stack float64, n int) {
	t.Helper()
	c := newChecker(t, Options{Env: env})
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	for _, p := range corpusT(t) {
		if !want[p.ID] {
			continue
		}
		delete(want, p.ID)
		s, err := c.Start(context.Background(), checkers.SessionOptions{Flags: p.Flags, Filename: p.Base})
		if err != nil {
			t.Fatal(err)
		}
		chs := chunk.Split(p.Text, chunk.OptionsForFlags(p.Flags, p.Base))
		first := -1
		var pids []int
		for i, ch := range chs {
			cp := ch.PreambleEnd || (first >= 0 && (i-first)%25 == 0)
			if ch.PreambleEnd {
				first = i
			}
			if err := s.Submit(ch.Text, checkers.SubmitOptions{Cat: ch.Cat, Checkpoint: cp}); err != nil {
				t.Fatal(err)
			}
			waitFor(t, s, checkers.KindProgress)
			if cp {
				pids = append(pids, waitFor(t, s, checkers.KindChkpt).PID)
			}
		}
		for _, pid := range pids {
			a, st := privateKBByMapping(t, pid)
			all, stack = all+a, stack+st
		}
		n += len(pids)
		s.Close()
	}
	if len(want) > 0 {
		t.Fatalf("not in the corpus: %v", want)
	}
	return all, stack, n
}

// Before each fork the shim drops the pages of its stack below the frame that forks (dead,
// left over from the parser's deeper calls), so that the session's next deep calls do not copy
// them out of the dormant checkpoint. HYDRA_SHIM_KEEP_STACK=1 is the shim without it.
func TestDeadStackDroppedBeforeFork(t *testing.T) {
	progs := []string{"cpp/backtracking/generate_parentheses.cpp", "c/audio/alaw.c"}
	_, off, n := dormantKB(t, progs, []string{"HYDRA_SHIM_KEEP_STACK=1"})
	_, on, _ := dormantKB(t, progs, nil)
	t.Logf("%d checkpoints: their stacks hold %.0f kB of private memory with the dead stack kept, %.0f kB with it dropped", n, off, on)
	if off < 8*float64(n) {
		t.Fatalf("with the dead stack kept the checkpoints' stacks hold only %.0f kB over %d checkpoints: the session no longer copies stack pages out of them, so this test shows nothing", off, n)
	}
	if on*2 > off {
		t.Errorf("with the dead stack dropped the checkpoints' stacks still hold %.0f kB (%.0f kB kept): it was not dropped", on, off)
	}
}

// After a checkpoint's fork the shim's malloc (shim/alloc.cpp) puts new objects on fresh pages
// and never writes free blocks from before the fork, so the session copies fewer pages out of
// its checkpoints than with glibc's malloc, which hands out the free chunks that lie all over
// the shared heap first. HYDRA_SHIM_GLIBC_MALLOC=1 is the shim with glibc's malloc.
func TestGenerationalMallocKeepsCheckpointsSmall(t *testing.T) {
	leverSavesCheckpointMemory(t, []string{"cpp/backtracking/generate_parentheses.cpp", "cpp/math/check_prime.cpp"},
		"HYDRA_SHIM_GLIBC_MALLOC=1", "glibc's malloc", "the generational one", 0.15)
}

// Every chunk is a FileID of its own over its own buffer, but all of them name one virtual file
// (shim/stream.cpp, enterChunk), so a chunk adds no entry to FileManager's maps, SourceManager's content
// caches or HeaderSearch's file info: tables that every chunk wrote again after each fork, on
// pages each checkpoint then held. HYDRA_SHIM_FILE_PER_CHUNK=1 is the shim with a virtual file
// of each chunk's own.
func TestOneFileEntryForEveryChunkKeepsCheckpointsSmall(t *testing.T) {
	leverSavesCheckpointMemory(t, []string{"cpp/backtracking/generate_parentheses.cpp", "c/audio/alaw.c"},
		"HYDRA_SHIM_FILE_PER_CHUNK=1", "a file per chunk", "one file for all", 0.10)
}

// leverSavesCheckpointMemory measures the programs' dormant checkpoints with the shim's lever
// turned off by offEnv and with the default shim, and fails unless the default saves at least
// the given fraction of their private memory.
func leverSavesCheckpointMemory(t *testing.T, progs []string, offEnv, offName, onName string, saving float64) {
	t.Helper()
	off, _, n := dormantKB(t, progs, []string{offEnv})
	on, _, _ := dormantKB(t, progs, nil)
	t.Logf("%d checkpoints: %.0f kB of private memory each with %s, %.0f kB with %s", n, off/float64(n), offName, on/float64(n), onName)
	if on > off*(1-saving) {
		t.Errorf("with %s the checkpoints hold %.0f kB, with %s %.0f kB: want at least %.0f%% less", onName, on, offName, off, saving*100)
	}
}
