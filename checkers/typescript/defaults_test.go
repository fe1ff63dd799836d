package typescript

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/hydra-lsp/hydra/checkers"
)

// TestDefaultConfigForgetsClosedFiles: two files that exist only in the checker (a directory
// with no files on disk, as `hydra bench` checks its tasks), checked one after the other in the
// same directory. Once the first one's session has ended, its file is gone; the default
// tsconfig.json of the directory must no longer name it, or every later check there fails with
// TS6053 ("File ... not found").
func TestDefaultConfigForgetsClosedFiles(t *testing.T) {
	ck := newChecker(t)
	dir := filepath.Join(t.TempDir(), "not-on-disk")
	for _, name := range []string{"first.ts", "second.ts"} {
		s, err := ck.Start(context.Background(), checkers.SessionOptions{Filename: filepath.Join(dir, name)})
		if err != nil {
			t.Fatal(err)
		}
		evs := streamLines(t, ck, s, "function f(n: number): number {\n  return n + 1;\n}\n", false)
		s.Close()
		if first, ok := firstError(evs); first != nil || !ok {
			t.Fatalf("%s: error %+v, done ok %v; want it accepted", name, first, ok)
		}
	}
}

// TestAFileOnlyHereComesBackWithItsNewText: a file that exists only in the checker ends (its
// last session closes) and a session resumed from its checkpoint brings it back, with more
// text, as `hydra bench` does (a checkpoint of the prompt, then one search per policy). The
// compiler must check the new text, not the one it had before the file ended: once right
// after (before it was told the file is gone) and once after another file's check told it.
func TestAFileOnlyHereComesBackWithItsNewText(t *testing.T) {
	ck := newChecker(t)
	// A directory whose parents are not on disk either, as hydra bench's tasks are checked in.
	dir := "/hydra-test-not-on-disk/fib"
	file := filepath.Join(dir, "fib.ts")
	s, err := ck.Start(context.Background(), checkers.SessionOptions{Filename: file})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Submit("// fib\nfunction fib(n: number): number {\n", checkers.SubmitOptions{Cat: checkers.BoundaryLine, Checkpoint: true}); err != nil {
		t.Fatal(err)
	}
	var cp checkers.Checkpoint
	for ev := range s.Events() {
		if ev.Kind == checkers.KindChkpt {
			cp = ck.Adopt(ev.ID)
			break
		}
	}
	endAndWait := func(s checkers.Session) {
		s.Close()
		for range s.Events() { // closed once the session has ended, its file released
		}
	}
	endAndWait(s)
	if cp == nil {
		t.Fatal("no checkpoint of the prompt")
	}
	defer cp.Release()
	body := "  if (n < 2)\n    return n;\n  return fib(n - 1) + fib(n - 2);\n}\n"
	for round, between := range []string{"", "other.ts"} {
		if between != "" {
			checkText(t, ck, t.TempDir(), between, "let v = 1;\n")
		}
		s, err := ck.Resume(context.Background(), cp)
		if err != nil {
			t.Fatal(err)
		}
		evs := streamLines(t, ck, s, body, false)
		endAndWait(s)
		if first, ok := firstError(evs); first != nil || !ok {
			t.Errorf("round %d (another file checked between: %q): error %+v, done ok %v; want the whole function accepted", round, between, first, ok)
		}
	}
}
