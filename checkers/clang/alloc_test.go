package clang

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestAllocatorContract builds testdata/alloc/contract.cpp with the shim's malloc
// (shim/alloc.cpp) and runs it: sizes, contents through realloc, calloc's zeros, alignment,
// refused overflows, the generations (an older free block is never handed out again nor
// written), and a fork. The compiler is the one the shim's Makefile uses (llvm-config-19's
// bindir).
func TestAllocatorContract(t *testing.T) {
	bindir, err := exec.Command("llvm-config-19", "--bindir").Output()
	if err != nil {
		t.Fatalf("llvm-config-19 --bindir: %v (the shim's build needs it too)", err)
	}
	cxx := filepath.Join(strings.TrimSpace(string(bindir)), "clang++")
	dir := filepath.Join(repoRootT(t), "checkers", "clang")
	bin := filepath.Join(t.TempDir(), "contract")
	build := exec.Command(cxx, "-std=c++17", "-O1", "-Wall", "-D_GNU_SOURCE", "-o", bin,
		filepath.Join(dir, "testdata", "alloc", "contract.cpp"), filepath.Join(dir, "shim", "alloc.cpp"))
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("%v: %v\n%s", build.Args, err, out)
	}
	out, err := exec.Command(bin).CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "ok" {
		t.Fatalf("the allocator broke its contract (%v):\n%s", err, out)
	}
}
