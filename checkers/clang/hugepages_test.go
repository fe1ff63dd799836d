package clang

import (
	"context"
	"slices"
	"testing"

	"github.com/hydra-lsp/hydra/checkers"
	"github.com/hydra-lsp/hydra/checkers/chunk"
)

// arenaFlags returns the VmFlags of the largest mapping of pid: the shim's malloc arena
// (shim/alloc.cpp reserves 16 GB at once). hg is MADV_HUGEPAGE, nh MADV_NOHUGEPAGE.
func arenaFlags(t *testing.T, pid int) []string {
	t.Helper()
	var arena smapsMapping
	for _, m := range smapsOf(t, pid) {
		if m.kB["Size"] > arena.kB["Size"] {
			arena = m
		}
	}
	if arena.kB["Size"] < 8<<20 {
		t.Fatalf("pid %d has no mapping of 8 GB or more (largest %.0f kB): where is the shim's malloc arena?", pid, arena.kB["Size"])
	}
	return arena.flags
}

// arenaFlagsAroundTheFirstFork streams roomProgram's preamble with a checkpoint at its end, as
// the engine does, and returns the arena's VmFlags after the first chunk (before any fork) and
// right after that checkpoint's fork.
func arenaFlagsAroundTheFirstFork(t *testing.T, env []string) (before, after []string) {
	t.Helper()
	p := roomProgramT(t)
	c := newChecker(t, Options{Env: env})
	s, err := c.Start(context.Background(), checkers.SessionOptions{Flags: p.Flags, Filename: p.Base})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	pid := s.(*Session).PID()
	for _, ch := range chunk.Split(p.Text, chunk.OptionsForFlags(p.Flags, p.Base)) {
		if err := s.Submit(ch.Text, checkers.SubmitOptions{Cat: ch.Cat, Checkpoint: ch.PreambleEnd}); err != nil {
			t.Fatalf("Submit: %v", err)
		}
		waitFor(t, s, checkers.KindProgress)
		if before == nil {
			before = arenaFlags(t, pid)
		}
		if ch.PreambleEnd {
			waitFor(t, s, checkers.KindChkpt)
			return before, arenaFlags(t, pid)
		}
	}
	t.Fatal("no preamble chunk")
	return nil, nil
}

// The shim's malloc asks for transparent huge pages until the session's first fork (the
// preamble's checkpoint), and from then on for none: the preamble's huge pages make every fork
// faster, while the first write into each new huge page zeroes 2 MB within one line, which made
// the slowest lines of the default corpus 2.3 ms slower on a virtual machine
// (docs/checker-benchmark.md, "Huge pages until the first fork", where hydra bench checker
// measures both). HYDRA_SHIM_HUGE_PAGES_AFTER_FORK=1 is the shim that keeps asking.
func TestNoHugePagesAfterTheFirstFork(t *testing.T) {
	before, after := arenaFlagsAroundTheFirstFork(t, nil)
	t.Logf("the arena's VmFlags before the first fork %v, after it %v", before, after)
	if !slices.Contains(before, "hg") {
		t.Errorf("before the first fork the arena's VmFlags are %v: want hg (MADV_HUGEPAGE)", before)
	}
	if !slices.Contains(after, "nh") || slices.Contains(after, "hg") {
		t.Errorf("after the first fork the arena's VmFlags are %v: want nh (MADV_NOHUGEPAGE), not hg", after)
	}
	_, keep := arenaFlagsAroundTheFirstFork(t, []string{"HYDRA_SHIM_HUGE_PAGES_AFTER_FORK=1"})
	t.Logf("with HYDRA_SHIM_HUGE_PAGES_AFTER_FORK=1, after the first fork: %v", keep)
	if !slices.Contains(keep, "hg") || slices.Contains(keep, "nh") {
		t.Errorf("with HYDRA_SHIM_HUGE_PAGES_AFTER_FORK=1 the arena's VmFlags after the first fork are %v: want hg still", keep)
	}
}
