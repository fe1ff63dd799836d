package clang

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hydra-lsp/hydra/checkers"
)

// A shim that cannot start (here: a shared library it needs is gone, as on a machine without
// the Clang packages) is reported with the loader's own message, not a bare "exit status 127".
func TestShimThatCannotLoadSaysWhy(t *testing.T) {
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Fatalf("cc is needed to build the stand-in binary: %v", err)
	}
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	lib := write("gone.c", "int hydra_gone(void) { return 0; }\n")
	main := write("main.c", "int hydra_gone(void);\nint main(void) { return hydra_gone(); }\n")
	run := func(args ...string) {
		if out, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
			t.Fatalf("cc %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	so := filepath.Join(dir, "libhydragone.so")
	run("-shared", "-fPIC", "-o", so, lib)
	bin := filepath.Join(dir, "shim-without-its-library")
	run("-o", bin, main, "-L"+dir, "-lhydragone")
	if err := os.Remove(so); err != nil {
		t.Fatal(err)
	}

	c := newChecker(t, Options{ShimPath: bin})
	s, err := c.Start(context.Background(), checkers.SessionOptions{Filename: filepath.Join(dir, "a.cpp")})
	if err != nil {
		// Failing at once is fine too, if the error says why.
		if !strings.Contains(err.Error(), "libhydragone.so") {
			t.Fatalf("Start: %v; want the loader's message naming libhydragone.so", err)
		}
		return
	}
	defer s.Close()
	var crash *checkers.Event
	for _, ev := range collect(t, s) {
		if ev.Kind == checkers.KindCrash {
			crash = &ev
		}
	}
	if crash == nil {
		t.Fatal("no crash event from a shim that cannot start")
	}
	for _, want := range []string{"exit status 127", "libhydragone.so", "cannot open shared object file"} {
		if !strings.Contains(crash.Diag, want) {
			t.Errorf("crash: %q; want it to contain %q", crash.Diag, want)
		}
	}
}
